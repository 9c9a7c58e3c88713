#!/bin/bash
# Submit a boopexp run to Slurm as a job array of N shards, then their merge (docs/cluster.md):
#
#   examples/slurm/submit.sh CONFIG N OUT [SBATCH_OPTION...]
#
# e.g. examples/slurm/submit.sh configs/ablation.yaml 16 results/ablation --partition=cpu --time=02:00:00
# Shard I plays into OUT/shard-I; when every shard has finished successfully (afterok), one more
# job merges them into OUT/all and prints its status. The SBATCH_OPTIONs go to both jobs (they
# override the scripts' #SBATCH defaults). Run it from the folder the paths are relative to: the
# jobs start there, and write their logs there (boopexp-shard-JOB_I.out, boopexp-merge-JOB.out).
set -euo pipefail
usage="usage: $0 CONFIG N OUT [SBATCH_OPTION...]"
CONFIG=${1:?$usage}
N=${2:?$usage}
OUT=${3:?$usage}
shift 3
if ! command -v sbatch >/dev/null 2>&1; then
  echo "$0: sbatch not found: this submits to Slurm and needs its client tools on PATH (docs/cluster.md);" \
       "without Slurm, play shard I of $N with: boopexp run $CONFIG --shard I/$N --out $OUT/shard-I" >&2
  exit 2
fi
if ! command -v boopexp >/dev/null 2>&1; then
  echo "$0: boopexp not found on PATH: activate the environment it is installed in (the jobs run it too)" >&2
  exit 2
fi
if ! [[ $N =~ ^[1-9][0-9]*$ ]]; then
  echo "$0: N = '$N' must be a whole number of shards >= 1; $usage" >&2
  exit 2
fi
# the config and N checked by boopexp itself (its one line) before anything is submitted: a dry run
# writes nothing
boopexp run "$CONFIG" --shard "1/$N" --out "$OUT/shard-1" --dry-run >/dev/null || exit 2
here=$(cd "$(dirname "$0")" && pwd)
array=$(sbatch --parsable --array="1-$N" "$@" "$here/shards.sbatch" "$CONFIG" "$N" "$OUT")
array=${array%%;*}  # --parsable prints JOB_ID[;CLUSTER]
# a shard that fails (or runs out of walltime) cancels the merge instead of leaving it pending
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes "$@" "$here/merge.sbatch" "$OUT")
merge=${merge%%;*}
echo "shards: job array $array (1-$N) into $OUT/shard-*; merge: job $merge into $OUT/all once they all succeed"
