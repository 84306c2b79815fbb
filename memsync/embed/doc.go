// Package embed turns text into dense vectors for semantic recall, in pure
// Go, with the model inside the binary.
//
// The model is static (Model2Vec-style): one vector per WordPiece token,
// distilled from all-MiniLM-L6-v2 by scripts/make-embedder. A text's vector
// is the mean of its tokens' vectors, L2-normalised. There is no transformer
// at run time: embedding a 200-character memory is a tokenisation and a few
// dozen row additions.
//
// A model is a directory (or the embedded model/ folder) of two files:
//
//	vocab.txt    the WordPiece vocabulary, one token a line; line n is id n
//	vectors.bin  little-endian:
//	               [8]byte  magic "MSEMBv1\x00"
//	               uint32   rows (== lines of vocab.txt)
//	               uint32   dim
//	               rows × float32  per-row scale
//	               rows × dim int8 quantised components (row-major)
//
// Row r's vector is scale[r] × q[r]. The token weights (SIF, by Zipf rank)
// are baked into the rows, so pooling is a plain mean. Loading indexes the
// vocabulary in an open-addressing hash table over its own bytes and
// nothing else: the vectors are read in place. The built-in model's table
// is made at build time (model/vocab.idx, by go generate from vocab.txt;
// TestVocabIndexFile checks it is the table Load would build) and read in
// place too, so a process's first Embed builds nothing. vocab.idx is
// derived data: it is not in SHA256SUMS and not part of the Version.
//
// Pooling sums the rows component by component in token order, each
// product and each sum rounded to float32 (poolGeneric); those bits are
// part of the model's Version. On amd64 with AVX2 a small assembly kernel
// does the same operations eight components at a time (no fused
// multiply-add, so the same bits: TestPoolKernels, TestVectorsPinned); the
// build tag purego, or any other CPU, runs the Go loop.
//
// The tokeniser is BERT's uncased one (clean control characters, split CJK
// ideographs, NFD and drop nonspacing marks, lowercase, split on whitespace
// and punctuation) followed by greedy longest-match WordPiece, as the Hugging
// Face tokenizer of the source model does; testdata/golden.json holds the ids
// that tokenizer produced for testdata/fixture.txt.
package embed
