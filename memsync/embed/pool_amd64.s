//go:build amd64 && !purego

#include "textflag.h"

// func poolAVX2(out *float32, dim int, q *byte, toks *token, n int)
//
// For each token (struct{scale float32; row int}, 16 bytes): Y0 = its
// scale in every lane; for each 32 components of its row: out[i] =
// out[i] + scale × float32(int8 q[row+i]) — VCVTDQ2PS is exact on int8
// values, VMULPS and VADDPS round once each as MULSS and ADDSS do, and
// nothing is fused, so the bits are poolGeneric's. dim is a positive
// multiple of 32. The row two tokens ahead is prefetched: the cache
// lines of its first 256 bytes (the built-in model's whole row; offset
// 255 catches the fifth line a row not aligned to 64 bytes reaches, and a
// longer row's rest is left to the hardware): the rows are
// scattered over the model's 7.8 MB, and a text embedded while other work
// has the caches (the projection's reader, a command's first Embed)
// otherwise waits for each row in turn (BenchmarkEmbedCold).
TEXT ·poolAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ dim+8(FP), CX
	MOVQ q+16(FP), SI
	MOVQ toks+24(FP), BX
	MOVQ n+32(FP), DX

tok:
	TESTQ DX, DX
	JZ    done
	CMPQ  DX, $2
	JLE   nopf
	MOVQ  40(BX), R11 // row of the token two ahead: 2 × 16 + 8
	ADDQ  SI, R11
	PREFETCHT0 0(R11)
	PREFETCHT0 64(R11)
	PREFETCHT0 128(R11)
	PREFETCHT0 192(R11)
	PREFETCHT0 255(R11)

nopf:
	VBROADCASTSS 0(BX), Y0
	MOVQ  8(BX), R8
	ADDQ  SI, R8
	MOVQ  DI, R9
	MOVQ  CX, R10

comp:
	VPMOVSXBD 0(R8), Y1
	VPMOVSXBD 8(R8), Y2
	VPMOVSXBD 16(R8), Y3
	VPMOVSXBD 24(R8), Y4
	VCVTDQ2PS Y1, Y1
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VCVTDQ2PS Y4, Y4
	VMULPS    Y0, Y1, Y1
	VMULPS    Y0, Y2, Y2
	VMULPS    Y0, Y3, Y3
	VMULPS    Y0, Y4, Y4
	VADDPS    0(R9), Y1, Y1
	VADDPS    32(R9), Y2, Y2
	VADDPS    64(R9), Y3, Y3
	VADDPS    96(R9), Y4, Y4
	VMOVUPS   Y1, 0(R9)
	VMOVUPS   Y2, 32(R9)
	VMOVUPS   Y3, 64(R9)
	VMOVUPS   Y4, 96(R9)
	ADDQ      $32, R8
	ADDQ      $128, R9
	SUBQ      $32, R10
	JNZ       comp

	ADDQ $16, BX
	DECQ DX
	JMP  tok

done:
	VZEROUPPER
	RET
