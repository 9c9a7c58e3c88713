/* A btp engine in C (docs/protocol.md): uniformly random legal moves, its own board.
 *
 * Build: cc -O2 -o random_engine examples/engines/random_engine.c
 * Use:   agents: {crand: {engine: [./random_engine]}}
 *
 * It keeps the board from "position startpos moves ..." or "position fen <position string>
 * moves ..." (the one-line position string of docs/protocol.md, so it plays from the starts of an
 * openings suite too) with the rules of boop. (RULES.md: placement, the push, victory, one
 * promoted group named in the move when there is a choice), and "newgame seed S" seeds its
 * generator (xorshift64*), so its games are reproducible.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>

typedef struct { int cells[36]; int pool[2][2]; int large[2]; int to_move; int winner; } Board;
typedef struct { int n; int sq[3]; } Group;

static const int DIRS[8][2] = {{-1,-1},{-1,0},{-1,1},{0,1},{1,1},{1,0},{1,-1},{0,-1}};
static const int LINE_DIRS[4][2] = {{-1,1},{0,1},{1,1},{1,0}};
static unsigned long long rng_state = 0x9E3779B97F4A7C15ULL;

static unsigned long long next_random(void) {
    rng_state ^= rng_state >> 12; rng_state ^= rng_state << 25; rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}
static int below(int n) { return (int)(next_random() % (unsigned long long)n); }
static int side_of(int colour) { return colour < 0 ? 0 : 1; }  /* Blue = -1, Red = +1 */

static void init(Board *b) {
    memset(b, 0, sizeof *b);
    b->pool[0][0] = b->pool[1][0] = 8;
    b->to_move = -1;
}

static int lines(const Board *b, int me, Group *out) {
    int n = 0;
    for (int sq = 0; sq < 36; sq++) {
        int r = sq / 6, c = sq % 6;
        for (int d = 0; d < 4; d++) {
            int ok = 1; Group g = {3, {0, 0, 0}};
            for (int k = 0; k < 3; k++) {
                int a = r + k * LINE_DIRS[d][0], e = c + k * LINE_DIRS[d][1];
                if (a < 0 || a > 5 || e < 0 || e > 5 || b->cells[6 * a + e] * me <= 0) { ok = 0; break; }
                g.sq[k] = 6 * a + e;
            }
            if (ok) out[n++] = g;
        }
    }
    return n;
}

static int won(const Board *b, int me) {
    const int *pool = b->pool[side_of(me)];
    if (pool[0] == 0 && pool[1] == 0 && b->large[side_of(me)] == 8) return 1;
    Group ls[144]; int n = lines(b, me, ls);
    for (int i = 0; i < n; i++)
        if (b->cells[ls[i].sq[0]] == 2 * me && b->cells[ls[i].sq[1]] == 2 * me && b->cells[ls[i].sq[2]] == 2 * me)
            return 1;
    return 0;
}

/* The mover's candidate groups in the rules' order (RULES.md §5, §6). */
static int groups(const Board *b, int me, Group *out) {
    const int *pool = b->pool[side_of(me)];
    int singles = pool[0] == 0 && pool[1] == 0, n = 0;
    Group ls[144]; int nl = lines(b, me, ls);
    for (int sq = 0; sq < 36; sq++) {
        if (b->cells[sq] * me <= 0) continue;
        if (singles) { out[n].n = 1; out[n].sq[0] = sq; n++; }
        for (int i = 0; i < nl; i++) if (ls[i].sq[0] == sq) out[n++] = ls[i];
    }
    return n;
}

/* Place and push; the number of candidate groups after it (0 if the mover won). */
static int place(Board *b, int size, int sq, Group *cands) {
    int me = b->to_move, r = sq / 6, c = sq % 6;
    b->cells[sq] = me * size;
    b->pool[side_of(me)][size - 1]--;
    for (int d = 0; d < 8; d++) {
        int vr = r + DIRS[d][0], vc = c + DIRS[d][1], tr = r + 2 * DIRS[d][0], tc = c + 2 * DIRS[d][1];
        if (vr < 0 || vr > 5 || vc < 0 || vc > 5) continue;
        int v = b->cells[6 * vr + vc];
        if (v == 0 || (abs(v) == 2 && size == 1)) continue;
        if (tr >= 0 && tr <= 5 && tc >= 0 && tc <= 5) {
            if (b->cells[6 * tr + tc] == 0) { b->cells[6 * tr + tc] = v; b->cells[6 * vr + vc] = 0; }
        } else {
            b->cells[6 * vr + vc] = 0;
            b->pool[side_of(v)][abs(v) - 1]++;
        }
    }
    if (won(b, me)) { b->winner = me; return 0; }
    return groups(b, me, cands);
}

static void promote(Board *b, const Group *g) {
    int me = b->to_move;
    for (int i = 0; i < g->n; i++) {
        if (abs(b->cells[g->sq[i]]) == 1) b->large[side_of(me)]++;
        b->cells[g->sq[i]] = 0;
        b->pool[side_of(me)][1]++;
    }
}

/* The board of a position string's fields (ROWS BLUE_POOL RED_POOL SIDE [L_BLUE,L_RED MOVE]);
 * 0 if they are not one: 6 rows of 6 of ".bBrR", pools and counters "n,n", side b or r, and
 * 8 pieces for each player (on the board and in the pool). */
static int from_fen(Board *b, char **f, int n) {
    static const char CELLS[] = ".bBrR";
    static const int VALUES[] = {0, -1, -2, 1, 2};
    int owned[2] = {0, 0}, larges[2] = {0, 0}, l[2];
    if ((n != 4 && n != 6) || strlen(f[0]) != 41) return 0;  /* 6 rows of 6, 5 slashes */
    init(b);
    for (int i = 0; i < 41; i++) {
        const char *at = f[0][i] ? strchr(CELLS, f[0][i]) : NULL;
        if (i % 7 == 6) { if (f[0][i] != '/') return 0; continue; }
        if (!at) return 0;
        int v = VALUES[at - CELLS];
        b->cells[6 * (i / 7) + i % 7] = v;
        if (v) { owned[side_of(v)]++; if (abs(v) == 2) larges[side_of(v)]++; }
    }
    for (int s = 0; s < 2; s++) {
        char tail;
        if (sscanf(f[1 + s], "%d,%d%c", &b->pool[s][0], &b->pool[s][1], &tail) != 2
            || b->pool[s][0] < 0 || b->pool[s][1] < 0 || owned[s] + b->pool[s][0] + b->pool[s][1] != 8) return 0;
        larges[s] += b->pool[s][1];
    }
    if (strcmp(f[3], "b") && strcmp(f[3], "r")) return 0;
    b->to_move = f[3][0] == 'b' ? -1 : 1;
    if (n == 6) {
        char tail;
        if (sscanf(f[4], "%d,%d%c", &l[0], &l[1], &tail) != 2) return 0;
        for (int s = 0; s < 2; s++) { if (l[s] < larges[s] || l[s] > 8) return 0; b->large[s] = l[s]; }
    } else {
        b->large[0] = larges[0]; b->large[1] = larges[1];
    }
    return 1;
}

static void square_name(int sq, char *out) { out[0] = (char)('a' + sq % 6); out[1] = (char)('0' + 6 - sq / 6); out[2] = 0; }
static int parse_square(const char *t) {
    int f = tolower((unsigned char)t[0]) - 'a', rank = t[1] - '0';
    return (f < 0 || f > 5 || rank < 1 || rank > 6) ? -1 : 6 * (6 - rank) + f;
}

/* Play a move in the notation; 0 if it is not legal. */
static int play(Board *b, const char *text) {
    int sq = parse_square(text), size = isupper((unsigned char)text[0]) ? 2 : 1;
    if (sq < 0 || b->winner || b->cells[sq] != 0 || b->pool[side_of(b->to_move)][size - 1] == 0) return 0;
    Group cands[200];
    int n = place(b, size, sq, cands);
    if (n > 0) {
        int chosen = 0;
        const char *tail = strchr(text, ':');
        if (tail) {
            int len = (int)strlen(tail + 1) / 2; chosen = -1;
            for (int i = 0; i < n && chosen < 0; i++) {
                if (cands[i].n != len) continue;
                int same = 1;
                for (int k = 0; k < len; k++) if (cands[i].sq[k] != parse_square(tail + 1 + 2 * k)) same = 0;
                if (same) chosen = i;
            }
            if (chosen < 0) return 0;
        } else if (n > 1) return 0;
        promote(b, &cands[chosen]);
    }
    b->to_move = -b->to_move;
    return 1;
}

int main(void) {
    char line[65536];
    Board b; init(&b);
    setvbuf(stdout, NULL, _IOLBF, 0);
    int lost = 0;  /* the last position could not be set up: answer go with bestmove (none) */
    while (fgets(line, sizeof line, stdin)) {
        char *cmd = strtok(line, " \t\r\n");
        if (!cmd) continue;
        if (!strcmp(cmd, "btp")) printf("id name random_engine.c\nid author boopexp examples\nid protocol 1\nbtpok\n");
        else if (!strcmp(cmd, "isready")) printf("readyok\n");
        else if (!strcmp(cmd, "quit")) return 0;
        else if (!strcmp(cmd, "newgame")) {
            char *w;
            init(&b);
            while ((w = strtok(NULL, " \t\r\n")))
                if (!strcmp(w, "seed") && (w = strtok(NULL, " \t\r\n"))) rng_state = strtoull(w, NULL, 10) * 2 + 1;
        } else if (!strcmp(cmd, "position")) {
            char *w = strtok(NULL, " \t\r\n");
            init(&b);
            lost = 1;  /* until the position is set up: no move on a board that is not the game's */
            if (w && !strcmp(w, "fen")) {
                char *fields[7]; int n = 0;
                while ((w = strtok(NULL, " \t\r\n")) && strcmp(w, "moves")) { if (n < 7) fields[n] = w; n++; }
                if (!from_fen(&b, fields, n)) { printf("info error not a position string\n"); continue; }
            } else if (w && !strcmp(w, "startpos")) {
                w = strtok(NULL, " \t\r\n");
            } else {
                printf("info error position: startpos or fen <position string>\n"); continue;
            }
            lost = 0;
            if (w && !strcmp(w, "moves"))
                while ((w = strtok(NULL, " \t\r\n")))
                    if (!play(&b, w)) { printf("info error illegal move %s\n", w); lost = 1; break; }
        } else if (!strcmp(cmd, "go")) {
            int moves[72], n = 0, me = side_of(b.to_move);
            for (int size = 1; size <= 2; size++)
                if (b.pool[me][size - 1]) for (int sq = 0; sq < 36; sq++) if (!b.cells[sq]) moves[n++] = size * 36 + sq;
            if (lost || b.winner || n == 0) { printf("bestmove (none)\n"); continue; }
            int m = moves[below(n)], size = m / 36, sq = m % 36;
            char text[16], name[3];
            square_name(sq, name);
            snprintf(text, sizeof text, "%c%c", size == 2 ? toupper((unsigned char)name[0]) : name[0], name[1]);
            Board trial = b; Group cands[200];
            int ng = place(&trial, size, sq, cands);
            if (ng > 1) {
                Group *g = &cands[below(ng)];
                strcat(text, ":");
                for (int k = 0; k < g->n; k++) { square_name(g->sq[k], name); strcat(text, name); }
            }
            printf("bestmove %s\n", text);
        }
    }
    return 0;
}
