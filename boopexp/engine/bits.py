"""Bit tricks for the compiled kernels: popcount through LLVM's ctpop intrinsic."""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of an integer (one machine instruction where the CPU has it)."""
    sig = x(x)

    def codegen(context, builder, signature, args):
        (val,) = args
        fnty = ir.FunctionType(val.type, [val.type])
        fn = cgutils.get_or_insert_function(builder.module, fnty, f"llvm.ctpop.i{val.type.width}")
        return builder.call(fn, [val])

    return sig, codegen
