//go:build amd64 && !purego

#include "textflag.h"

// func dotAVX2(q *int16, b *byte, n int) int32
//
// The dot product of n int16 at q (the query, int8 values widened) and n
// int8 at b: sixteen components an instruction (sign-extend b to int16,
// VPMADDWD multiplies and adds pairs into int32 lanes), two accumulators,
// the eight lanes summed at the end. Integer sums: the same value as dot
// in any order. n is a positive multiple of 16.
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ  q+0(FP), SI
	MOVQ  b+8(FP), DI
	MOVQ  n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1

loop32:
	CMPQ      CX, $32
	JLT       tail16
	VPMOVSXBW 0(DI), Y2
	VPMOVSXBW 16(DI), Y3
	VPMADDWD  0(SI), Y2, Y2
	VPMADDWD  32(SI), Y3, Y3
	VPADDD    Y2, Y0, Y0
	VPADDD    Y3, Y1, Y1
	ADDQ      $32, DI
	ADDQ      $64, SI
	SUBQ      $32, CX
	JMP       loop32

tail16:
	CMPQ      CX, $16
	JLT       reduce
	VPMOVSXBW 0(DI), Y2
	VPMADDWD  0(SI), Y2, Y2
	VPADDD    Y2, Y0, Y0

reduce:
	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	MOVL         AX, ret+24(FP)
	VZEROUPPER
	RET
