package main

// `bench semantic` is issue 27's go/no-go diagnostic for the embedder
// (memsync/embed), below the command: on the LoCoMo dev set it ranks every
// question's turns by plain BM25, by the vector's cosine alone, by
// reciprocal-rank fusion of the two and by a weighted blend, and prints
// recall@10 and MRR@10 per category; on a labelled set of record pairs it
// measures how well the surprise gate's word similarity and the vector's
// cosine separate a repeated memory from a new one (AUC). It touches no
// store: a figure through `memsync search` is the recall figure's job.

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/memsync/memsync/memsync/embed"
	"github.com/memsync/memsync/memsync/surprise"
)

// rrfK is the constant of reciprocal-rank fusion (Cormack et al.: 60).
const rrfK = 60

// fusionDepth is how many candidates each list gives the fusions.
const fusionDepth = 100

// defaultGatePairs is the labelled pair set of the gate figure.
const defaultGatePairs = "cmd/bench/testdata/gate-pairs.jsonl"

// textEmbedder is memsync.Embedder, as far as the diagnostic needs it.
type textEmbedder interface {
	Embed(text string) []float32
	Dim() int
	Version() string
}

// semanticMain runs `bench semantic [flags]`.
func semanticMain(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench semantic", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("recall-data", defaultRecallData, "the LoCoMo development set (JSON)")
	convs := fs.Int("recall-conversations", 0, "conversations to read (0: all)")
	model := fs.String("embedder", "default", "the model: default (built in), or a model directory (scripts/make-embedder's output)")
	pairs := fs.String("gate-pairs", defaultGatePairs, "the labelled pairs of the gate figure (JSON lines: a, b, label)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	e, err := embed.Open(*model)
	if err != nil || e.Dim() == 0 {
		fmt.Fprintf(stderr, "bench semantic: --embedder %q: %v\n", *model, err)
		return 2
	}
	cases, err := loadLocomo(*data, *convs)
	if err != nil {
		fmt.Fprintf(stderr, "bench semantic: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "Model %s (%d dims).\n\n", e.Version(), e.Dim())
	semanticRecall(stdout, e, cases)
	ps, err := readGatePairs(*pairs)
	if err != nil {
		fmt.Fprintf(stderr, "bench semantic: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout)
	gateSeparation(stdout, e, ps)
	return 0
}

// semanticPath is one way of ranking a question's turns.
type semanticPath struct {
	name   string
	rank   func(bmU []string, bmS []float64, vecU []string, vecS []float64) []string
	scores *recallScores
}

// semanticRecall prints the LoCoMo table: every path, every category.
func semanticRecall(w io.Writer, e textEmbedder, cases []*recallCase) {
	paths := []*semanticPath{
		{name: "BM25 (the baseline)", rank: func(bmU []string, _ []float64, _ []string, _ []float64) []string { return bmU }},
		{name: "vector only (cosine)", rank: func(_ []string, _ []float64, vecU []string, _ []float64) []string { return vecU }},
		{name: fmt.Sprintf("RRF BM25 + vector (k=%d)", rrfK), rank: func(bmU []string, _ []float64, vecU []string, _ []float64) []string {
			return rrf(rrfK, bmU, vecU)
		}},
	}
	for _, alpha := range []float64{0.3, 0.5, 0.7} {
		paths = append(paths, &semanticPath{
			name: fmt.Sprintf("blend %.1f·cosine + %.1f·BM25/max", alpha, 1-alpha),
			rank: func(bmU []string, bmS []float64, vecU []string, vecS []float64) []string {
				return blend(alpha, bmU, bmS, vecU, vecS)
			},
		})
	}
	for _, p := range paths {
		p.scores = newRecallScores()
	}
	questions, turns := 0, 0
	var embedTime time.Duration
	for _, rc := range cases {
		bm := newBM25(rc.records)
		vecs := make([][]float32, len(rc.records))
		start := time.Now()
		for i := range rc.records {
			vecs[i] = e.Embed(rc.records[i].Text)
		}
		embedTime += time.Since(start)
		turns += len(rc.records)
		for _, q := range rc.questions {
			bmU, bmS := bm.scoredSearch(q.text, fusionDepth)
			vecU, vecS := cosineTop(e.Embed(q.text), vecs, rc, fusionDepth)
			for _, p := range paths {
				p.scores.add(q, p.rank(bmU, bmS, vecU, vecS))
			}
			questions++
		}
	}
	cats := []int{1, 2, 3, 4, 0}
	var head []string
	for _, c := range cats {
		name := categoryNames[c]
		if c == 0 {
			name = "overall"
		}
		head = append(head, fmt.Sprintf("%s (n=%d)", name, paths[0].scores.n[c]))
	}
	fmt.Fprintf(w, "LoCoMo dev, %d conversations, %d turns, %d questions; recall@10 / MRR@10 per category (below the command).\n\n", len(cases), turns, questions)
	fmt.Fprintf(w, "| path | %s |\n|---|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(cats)))
	for _, p := range paths {
		var cells []string
		for _, c := range cats {
			cells = append(cells, fmt.Sprintf("%.3f / %.3f", p.scores.mean(p.scores.r10, c), p.scores.mean(p.scores.mrr, c)))
		}
		fmt.Fprintf(w, "| %s | %s |\n", p.name, strings.Join(cells, " | "))
	}
	fmt.Fprintf(w, "\nEmbedding the %d turns took %s (%.1f µs a turn, one goroutine).\n", turns, embedTime.Round(time.Millisecond),
		float64(embedTime.Microseconds())/float64(max(turns, 1)))
}

// cosineTop ranks rc's turns by the cosine of their vectors to q (vectors
// are unit length: the dot product), best first, ties by uuid; turns with
// no vector (no known token) are left out.
func cosineTop(q []float32, vecs [][]float32, rc *recallCase, k int) ([]string, []float64) {
	type hit struct {
		uuid string
		s    float64
	}
	var hits []hit
	for i, v := range vecs {
		s := dot(q, v)
		if s == 0 {
			continue
		}
		hits = append(hits, hit{rc.records[i].UUID, s})
	}
	sort.Slice(hits, func(a, b int) bool {
		if hits[a].s != hits[b].s {
			return hits[a].s > hits[b].s
		}
		return hits[a].uuid < hits[b].uuid
	})
	hits = hits[:min(len(hits), k)]
	u, s := make([]string, len(hits)), make([]float64, len(hits))
	for i, h := range hits {
		u[i], s[i] = h.uuid, h.s
	}
	return u, s
}

func dot(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// rrf fuses ranked lists: each item scores Σ 1/(k + rank), rank from 1;
// best first, ties by uuid.
func rrf(k int, lists ...[]string) []string {
	score := map[string]float64{}
	for _, l := range lists {
		for i, u := range l {
			score[u] += 1 / float64(k+i+1)
		}
	}
	return byScore(score)
}

// blend scores each candidate alpha·cosine + (1−alpha)·BM25/max BM25 (a
// candidate missing from a list scores 0 there); best first, ties by uuid.
func blend(alpha float64, bmU []string, bmS []float64, vecU []string, vecS []float64) []string {
	score := map[string]float64{}
	top := 0.0
	for _, s := range bmS {
		top = math.Max(top, s)
	}
	for i, u := range bmU {
		if top > 0 {
			score[u] += (1 - alpha) * bmS[i] / top
		}
	}
	for i, u := range vecU {
		score[u] += alpha * vecS[i]
	}
	return byScore(score)
}

func byScore(score map[string]float64) []string {
	out := make([]string, 0, len(score))
	for u := range score {
		out = append(out, u)
	}
	sort.Slice(out, func(a, b int) bool {
		if score[out[a]] != score[out[b]] {
			return score[out[a]] > score[out[b]]
		}
		return out[a] < out[b]
	})
	return out
}

// gatePair is one labelled pair: label is duplicate, paraphrase or
// different (the gate should store b only when it is different).
type gatePair struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Label string `json:"label"`
}

func readGatePairs(path string) ([]gatePair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gate pairs: %w", err)
	}
	defer f.Close()
	var out []gatePair
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var p gatePair
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		switch p.Label {
		case "duplicate", "paraphrase", "different":
		default:
			return nil, fmt.Errorf("%s:%d: label %q (want duplicate, paraphrase or different)", path, line, p.Label)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("gate pairs: %w", err)
	}
	return out, nil
}

// gateSeparation prints, for the gate's word similarity and the vector's
// cosine, the mean similarity per label and the AUC of telling a repeated
// memory (duplicate or paraphrase) from a different one.
func gateSeparation(w io.Writer, e textEmbedder, pairs []gatePair) {
	sims := []struct {
		name string
		fn   func(a, b string) float64
	}{
		{"words (the gate's Jaccard)", func(a, b string) float64 {
			return surprise.Similarity(surprise.TextWords(a), surprise.TextWords(b))
		}},
		{"vector cosine", func(a, b string) float64 { return dot(e.Embed(a), e.Embed(b)) }},
	}
	n := map[string]int{}
	for _, p := range pairs {
		n[p.Label]++
	}
	fmt.Fprintf(w, "Gate pairs: %d duplicate, %d paraphrase, %d different (cmd/bench/testdata/gate-pairs.jsonl).\n\n", n["duplicate"], n["paraphrase"], n["different"])
	fmt.Fprintln(w, "| similarity | mean duplicate | mean paraphrase | mean different | AUC repeated vs different | AUC paraphrase vs different |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, s := range sims {
		by := map[string][]float64{}
		for _, p := range pairs {
			by[p.Label] = append(by[p.Label], s.fn(p.A, p.B))
		}
		repeated := append(append([]float64(nil), by["duplicate"]...), by["paraphrase"]...)
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %.3f | %.3f |\n", s.name, meanOf(by["duplicate"]), meanOf(by["paraphrase"]),
			meanOf(by["different"]), auc(repeated, by["different"]), auc(by["paraphrase"], by["different"]))
	}
}

func meanOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// auc is the probability that a positive scores above a negative (ties
// count half): the area under the ROC curve.
func auc(pos, neg []float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	wins := 0.0
	for _, p := range pos {
		for _, q := range neg {
			switch {
			case p > q:
				wins++
			case p == q:
				wins += 0.5
			}
		}
	}
	return wins / float64(len(pos)*len(neg))
}
