"""``popcount`` and ``trailing_zeros`` for the bitboard kernels (numba intrinsics, typed ``int ->
int`` for mypy).

Both are numba intrinsics: a kernel calls them with the integer alone, but the Python objects'
own signatures start with numba's typing context. The casts give the type checker the signature
the kernels see (``int -> int``); at run time they are the intrinsics themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from llvmlite import ir
from numba.core import cgutils
from numba.cpython.unsafe.numbers import trailing_zeros as _trailing_zeros
from numba.extending import intrinsic


def _popcount(typingctx, x):
    """Number of set bits of an integer (one machine instruction where the CPU has it)."""
    sig = x(x)

    def codegen(context, builder, signature, args):
        (val,) = args
        fnty = ir.FunctionType(val.type, [val.type])
        fn = cgutils.get_or_insert_function(builder.module, fnty, f"llvm.ctpop.i{val.type.width}")
        return builder.call(fn, [val])

    return sig, codegen


#: popcount(x): the number of set bits of the integer x
popcount = cast("Callable[[int], int]", intrinsic(_popcount))
#: trailing_zeros(x): the index of the lowest set bit of the integer x (x != 0)
trailing_zeros = cast("Callable[[int], int]", _trailing_zeros)
