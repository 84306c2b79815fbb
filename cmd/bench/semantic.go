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
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/embed"
	"github.com/memsync/memsync/memsync/read"
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
func semanticMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench semantic", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("recall-data", defaultRecallData, "the LoCoMo development set (JSON)")
	convs := fs.Int("recall-conversations", 0, "conversations to read (0: all)")
	model := fs.String("embedder", "default", "the model: default (built in), or a model directory (scripts/make-embedder's output)")
	withMemsync := fs.Bool("memsync-lexical", true, "also fuse with memsync's own lexical ranking (each conversation projected into the embedded store)")
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
	cases, err := loadLocomo(*data, *convs, true)
	if err != nil {
		fmt.Fprintf(stderr, "bench semantic: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "Model %s (%d dims).\n\n", e.Version(), e.Dim())
	if err := semanticRecall(ctx, stdout, e, cases, *withMemsync); err != nil {
		fmt.Fprintf(stderr, "bench semantic: %v\n", err)
		return 1
	}
	ps, err := readGatePairs(*pairs)
	if err != nil {
		fmt.Fprintf(stderr, "bench semantic: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout)
	gateSeparation(stdout, e, ps)
	return 0
}

// semanticPath is one way of ranking a question's turns from a lexical
// list (uuids and scores, best first) and the vector's list.
type semanticPath struct {
	name    string
	lexical string // the lexical source it reads: "BM25" or "memsync"
	rank    func(lexU []string, lexS []float64, vecU []string, vecS []float64) []string
	scores  *recallScores
}

// lexicalFunc ranks rc's turns for a question, best first, with scores.
type lexicalFunc func(q string) ([]string, []float64, error)

// semanticRecall prints the LoCoMo table: every path, every category. With
// withMemsync, memsync's own lexical ranking (each conversation projected
// into the embedded store, Graph.Search) is a second lexical source.
func semanticRecall(ctx context.Context, w io.Writer, e textEmbedder, cases []*recallCase, withMemsync bool) error {
	var paths []*semanticPath
	sources := []string{"BM25"}
	if withMemsync {
		sources = append(sources, "memsync")
	}
	for _, src := range sources {
		name := map[string]string{"BM25": "plain BM25", "memsync": "memsync lexical (embedded Graph.Search)"}[src]
		paths = append(paths, &semanticPath{name: name + " alone", lexical: src,
			rank: func(lexU []string, _ []float64, _ []string, _ []float64) []string { return lexU }})
		if src == "BM25" {
			paths = append(paths, &semanticPath{name: "vector only (cosine)", lexical: src,
				rank: func(_ []string, _ []float64, vecU []string, _ []float64) []string { return vecU }})
		}
		paths = append(paths, &semanticPath{name: fmt.Sprintf("RRF %s + vector (k=%d)", src, rrfK), lexical: src,
			rank: func(lexU []string, _ []float64, vecU []string, _ []float64) []string { return rrf(rrfK, lexU, vecU) }})
		for _, alpha := range []float64{0.3, 0.5, 0.7} {
			paths = append(paths, &semanticPath{
				name:    fmt.Sprintf("blend %.1f·cosine + %.1f·%s/max", alpha, 1-alpha, src),
				lexical: src,
				rank: func(lexU []string, lexS []float64, vecU []string, vecS []float64) []string {
					return blend(alpha, lexU, lexS, vecU, vecS)
				},
			})
		}
	}
	for _, p := range paths {
		p.scores = newRecallScores()
	}
	questions, turns := 0, 0
	var embedTime time.Duration
	for _, rc := range cases {
		lex := map[string]lexicalFunc{}
		bm := newBM25(rc.records)
		lex["BM25"] = func(q string) ([]string, []float64, error) {
			u, s := bm.scoredSearch(q, fusionDepth)
			return u, s, nil
		}
		if withMemsync {
			search, done, err := memsyncLexical(ctx, rc)
			if err != nil {
				return fmt.Errorf("conversation %s: %w", rc.id, err)
			}
			defer done()
			lex["memsync"] = search
		}
		vecs := make([][]float32, len(rc.records))
		start := time.Now()
		for i := range rc.records {
			vecs[i] = e.Embed(rc.records[i].Text)
		}
		embedTime += time.Since(start)
		turns += len(rc.records)
		for _, q := range rc.questions {
			vecU, vecS := cosineTop(e.Embed(q.text), vecs, rc, fusionDepth)
			for _, src := range sources {
				lexU, lexS, err := lex[src](q.text)
				if err != nil {
					return err
				}
				for _, p := range paths {
					if p.lexical == src {
						p.scores.add(q, p.rank(lexU, lexS, vecU, vecS))
					}
				}
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
	return nil
}

// memsyncLexical projects rc into a fresh embedded store with the engine
// and returns its own search (memsync's lexical ranking, no clock: the
// backend's Graph.Search as the recall figure's diagnostic calls it, but
// fusionDepth deep).
func memsyncLexical(ctx context.Context, rc *recallCase) (lexicalFunc, func(), error) {
	root, err := os.MkdirTemp("", "memsync-semantic-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(root) }
	if err := writeRecallRepo(root, rc); err != nil {
		cleanup()
		return nil, nil, err
	}
	layout := memsync.Layout{Root: root}
	g, err := embedded.Open(layout.LocalDir(), nil)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	done := func() { g.Close(); cleanup() }
	eng, err := memsync.New(memsync.Options{Root: root, Graph: g, BatchSize: engineBatch})
	if err != nil {
		done()
		return nil, nil, err
	}
	if _, err := eng.Rebuild(ctx, nil); err != nil {
		done()
		return nil, nil, fmt.Errorf("rebuild: %w", err)
	}
	return func(q string) ([]string, []float64, error) {
		query := recallQuery(q)
		query.Limit = fusionDepth
		hits, err := read.Search(ctx, g, query)
		if err != nil {
			return nil, nil, fmt.Errorf("Graph.Search %q: %w", q, err)
		}
		u, s := make([]string, len(hits)), make([]float64, len(hits))
		for i, h := range hits {
			u[i], s[i] = h.UUID, h.Score
		}
		return u, s, nil
	}, done, nil
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
	fmt.Fprintln(w, "| similarity | mean duplicate | mean paraphrase | mean different | AUC repeated vs different | AUC paraphrase vs different | skipped at ≥ 0.6 (the gate's novelty < 0.4): repeats / differents | best cut: skipped repeats / differents | safe cut (no different skipped): skipped repeats |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, s := range sims {
		by := map[string][]float64{}
		for _, p := range pairs {
			by[p.Label] = append(by[p.Label], s.fn(p.A, p.B))
		}
		repeated := append(append([]float64(nil), by["duplicate"]...), by["paraphrase"]...)
		cut, best := bestCut(repeated, by["different"])
		safe := slices.Max(append([]float64{math.Inf(-1)}, by["different"]...))
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %.3f | %.3f | %d of %d / %d of %d | ≥ %.2f: %d / %d | > %.2f: %d |\n", s.name, meanOf(by["duplicate"]), meanOf(by["paraphrase"]),
			meanOf(by["different"]), auc(repeated, by["different"]), auc(by["paraphrase"], by["different"]),
			countAtLeast(repeated, 0.6), len(repeated), countAtLeast(by["different"], 0.6), len(by["different"]),
			cut, best[0], best[1], safe, len(repeated)-countAtMost(repeated, safe))
	}
}

// countAtLeast is how many of xs are at least t.
func countAtLeast(xs []float64, t float64) int {
	n := 0
	for _, x := range xs {
		if x >= t {
			n++
		}
	}
	return n
}

// countAtMost is how many of xs are at most t.
func countAtMost(xs []float64, t float64) int {
	n := 0
	for _, x := range xs {
		if x <= t {
			n++
		}
	}
	return n
}

// bestCut is the similarity from which a pair would be skipped as a
// repeat that skips the most repeats less the differents it skips
// (Youden's J; the lowest such cut), with both counts: what a gate's
// threshold calibrated on these pairs would do.
func bestCut(repeated, different []float64) (float64, [2]int) {
	cuts := append(append([]float64(nil), repeated...), different...)
	best, bestJ, counts := 1.0, math.Inf(-1), [2]int{}
	for _, c := range cuts {
		r, d := countAtLeast(repeated, c), countAtLeast(different, c)
		j := float64(r)/float64(max(1, len(repeated))) - float64(d)/float64(max(1, len(different)))
		if j > bestJ || j == bestJ && c < best {
			best, bestJ, counts = c, j, [2]int{r, d}
		}
	}
	return best, counts
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
