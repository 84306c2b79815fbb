package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/offline"
	"github.com/memsync/memsync/memsync/read"
	recallrule "github.com/memsync/memsync/memsync/recall"
	"github.com/memsync/memsync/memsync/score"
)

const searchDescription = `Ranked lexical recall within what agent A may see: shared memories
(CONSTELLATION) and A's private ones (AGENT:A). QUERY is plain words, never
query syntax: punctuation only separates words, and stopwords ("what", "the")
do not count; a query of stopwords only finds nothing. A query that begins
with - goes after -- (search --agent A -- -foo) or in --query. When the graph
cannot be reached, the answer comes from the journals themselves, with
"offline": true and a note on stderr. No match is not an error.

Decay changes rank, never findability (SPEC §7): every matching memory is
found, archived ones too (marked "status: archived", ranked below active
ones of similar relevance); only superseded memories and memories flagged
wrong are left out, and --all shows them too. Without --as-of every record
is seen, one dated in the future as if written now; --as-of T answers as the
memory stood at T (records after T left out, decay at T).

Ranking: the best lexical candidates (at least 100, whatever --limit) are
ordered by
  score = relevance x importance factor x freshness factor
          x confidence factor x status factor
where relevance is the memory's lexical score over the best candidate's
(0..1]; the importance, freshness and confidence factors (0.8..1, from
the memory's importance, freshness and confidence, each 0..1) refine it;
the status factor is 1 (active, review), 0.75 (archived) or 0.6
(superseded or flagged wrong, with --all). Ties by uuid. Then a memory that
holds every query word another holds and more is moved above it, whatever
their scores (SPEC §7). --explain prints every factor per hit, as they
multiply into the printed score, and on the next line the values they
come from ("importance factor 0.9000" is "importance 0.50").

With --embedder (or memsync.yaml's embedder) other than none, recall is
hybrid: the lexical candidates and the memories nearest to the query in
vector space (the reader's groups only) are fused by reciprocal rank
fusion, 1/(60 + lexical rank) + 1/(60 + vector rank), which is then the
relevance; --explain prints both parts per hit.`

// searchHit is one result as search --json prints it.
type searchHit struct {
	UUID       string          `json:"uuid"`
	Agent      string          `json:"agent"`
	Kind       string          `json:"kind"`
	TS         string          `json:"ts"`
	Text       string          `json:"text"`
	Score      float64         `json:"score"`
	Importance float64         `json:"importance"`
	Confidence float64         `json:"confidence"`
	Status     string          `json:"status"`
	Lexical    float64         `json:"lexical"`
	Freshness  float64         `json:"freshness"`
	Factors    searchFactors   `json:"factors"`
	Retrieval  *searchParts    `json:"retrieval,omitempty"`
	Path       string          `json:"path"`
	Line       int             `json:"line"`
	Scope      string          `json:"scope"`
	GroupID    string          `json:"group_id"`
	Source     *journal.Source `json:"source,omitempty"`
	InvalidAt  string          `json:"invalid_at,omitempty"`
	ReplacedBy string          `json:"replaced_by,omitempty"`
}

// searchFactors is a hit's score factor by factor, as they multiply:
// score = relevance × importance × freshness × confidence × status. Terms
// is how many of the query's terms the memory holds (0 for a session
// neighbour found beside a hit): not a factor, but the rank's other rule
// (a memory holding every term another holds and more ranks above it).
type searchFactors struct {
	Terms      int     `json:"terms"`
	Held       string  `json:"held,omitempty"` // where it holds them: "text: postgres; tag: billing"
	Relevance  float64 `json:"relevance"`
	Importance float64 `json:"importance"`
	Freshness  float64 `json:"freshness"`
	Confidence float64 `json:"confidence"`
	Status     float64 `json:"status"`
	Order      float64 `json:"order"` // 1, or what the rank's rules moved the score by (score.Factors.Order)
	// Beside is, for a neighbour that is no lexical hit, the hit that
	// brought it in, and Via how: "session" (the same session) or
	// "episode" (the same agent's sessionless records, recall.EpisodeGap).
	Beside string `json:"beside,omitempty"`
	Via    string `json:"via,omitempty"`
	// TimeWord and DateMatch are the factors of time the relevance holds
	// (recall.Boosts): the query asks "when" and the text names a time;
	// the memory's ts falls in the time the query names. Absent: 1.
	TimeWord  float64 `json:"time_word,omitempty"`
	DateMatch float64 `json:"date_match,omitempty"`
}

// searchParts is, with an embedder, what each retrieval contributed to a
// hit's relevance (recall.Parts): its lexical score and rank, its vector
// cosine and rank (0 ranks: not in that list), fused by reciprocal rank
// fusion into Fused = 1/(60+lexical_rank) + 1/(60+vector_rank).
type searchParts struct {
	Lexical     float64 `json:"lexical"`
	LexicalRank int     `json:"lexical_rank"`
	Cosine      float64 `json:"cosine"`
	VectorRank  int     `json:"vector_rank"`
	Fused       float64 `json:"fused"`
}

// searchResult is the document search --json prints.
type searchResult struct {
	Offline bool        `json:"offline"`
	Reason  string      `json:"offline_reason,omitempty"`
	Results []searchHit `json:"results"`
}

func runSearch(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "search", "search QUERY --agent A [--query TEXT] [--limit N] [--kind K]... [--since T] [--as-of T] [--all] [--explain] [--json] [--repo DIR] [flags]", searchDescription)
	repoFlag := addRepoFlag(fs)
	agent := fs.String("agent", "", "the agent `A` reading (required): it sees shared memories and its own private ones")
	limit := fs.Int("limit", offline.DefaultLimit, "at most `N` results")
	var kinds stringList
	fs.Var(&kinds, "kind", "only memories of kind `K` (repeatable, or comma-separated): "+kindList())
	since := fs.String("since", "", "only memories at or after `T`: RFC 3339 time, a date (2026-11-20), or an age (36h, 7d)")
	all := fs.Bool("all", false, "include retired memories: superseded ones and ones flagged wrong (archived ones are always found)")
	asOf := fs.String("as-of", "", "answer as the memory stood at `T`, RFC 3339 (records after T left out, decay at T; default: now, every record seen)")
	explain := fs.Bool("explain", false, "print each ranking factor of every hit")
	asJSON := fs.Bool("json", false, "print one JSON document")
	query := fs.String("query", "", "the query `TEXT`, before any QUERY words (one that begins with - can be given this way)")
	var cfg Config
	addGraphFlags(fs.FlagSet, &cfg)
	if arg := dashQuery(fs.FlagSet, args); arg != "" {
		return fs.usageErr("%s is not a flag: a query that begins with - goes after -- (memsync search --agent A -- %s) or in --query", arg, arg)
	}
	words, code, done := fs.parse(args)
	if done {
		return code
	}
	if *query != "" {
		words = append([]string{*query}, words...)
	}
	q := memsync.SearchQuery{Text: strings.Join(words, " "), Limit: *limit, All: *all}
	switch {
	case len(words) == 0 || strings.TrimSpace(q.Text) == "":
		return fs.usageErr("QUERY: required (see memsync search --help)")
	case *agent == "":
		return fs.usageErr("--agent: required")
	case !validAgent(*agent):
		return fs.usageErr("--agent: %s", agentNameError(*agent))
	case *limit < 1:
		return fs.usageErr("--limit: must be at least 1, not %d", *limit)
	}
	for _, list := range kinds {
		for _, k := range strings.Split(list, ",") {
			k = strings.TrimSpace(k)
			if !journal.Kind(k).Valid() {
				return fs.usageErr("--kind: unknown kind %q (one of %s)", k, kindList())
			}
			q.Kinds = append(q.Kinds, journal.Kind(k))
		}
	}
	if *since != "" {
		t, err := parseSince(*since, env.Now())
		if err != nil {
			return fs.usageErr("--since: %v", err)
		}
		q.Since = t
	}
	q.Groups = journal.ReaderGroups(*agent)
	clock, err := parseClock(*asOf, env.Now())
	if err != nil {
		return fs.usageErr("--as-of: %v", err)
	}

	repo, err := existingRepo(env, *repoFlag)
	if err != nil {
		return fs.usageErr("%v", err)
	}
	if err := loadConfig(env, repo, fs.FlagSet, &cfg); err != nil {
		return fs.usageErr("%v", err)
	}
	if code, done := knownAgent(fs, repo, *agent); done {
		return code
	}

	res := searchResult{Results: []searchHit{}}
	rq := memsync.RankQuery{SearchQuery: q, Clock: clock}
	r := openReader(ctx, &cfg, repo, "search", env.Stderr)
	defer r.Close()
	hits, err := read.RankFrom(ctx, r, rq)
	if err != nil {
		if r.Offline {
			return fs.fail("offline search: %v", err)
		}
		return fs.fail("%v", err)
	}
	isOffline, reason := r.Offline, r.Reason
	if !isOffline {
		hintUnprojected(env, "search", repo, r.From)
	}
	res.Offline, res.Reason = isOffline, reason
	for _, h := range hits {
		sh := newSearchHit(h)
		if cfg.emb != nil {
			p := h.Parts
			sh.Retrieval = &searchParts{Lexical: roundScore(p.Lexical), LexicalRank: p.LexRank,
				Cosine: roundScore(p.Cosine), VectorRank: p.VecRank, Fused: roundScore(h.Lexical)}
		}
		res.Results = append(res.Results, sh)
	}
	if *asJSON {
		out, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", out)
		return exitOK
	}
	printHits(env, res, *explain)
	return exitOK
}

func newSearchHit(h memsync.Ranked) searchHit {
	out := searchHit{
		UUID: h.UUID, Agent: h.Agent, Kind: string(h.Kind), TS: h.TS.UTC().Format(time.RFC3339Nano),
		Text: h.Text, Score: roundScore(h.Score), Path: h.Path, Line: h.Line,
		Scope: string(h.Scope), GroupID: h.GroupID, Source: h.Source,
		Importance: h.Result.Importance, Confidence: h.Result.Confidence, Status: string(h.Result.Status),
		Lexical: roundScore(h.Lexical), Freshness: h.Freshness,
		Factors: searchFactors{Terms: recallrule.Held(h.Match), Held: h.Held, Relevance: h.Factors.Relevance, Importance: h.Factors.Importance,
			Freshness: h.Factors.Freshness, Confidence: h.Factors.Confidence, Status: h.Factors.Status, Order: h.Factors.Order,
			Beside: h.From, TimeWord: h.Boosts.Time, DateMatch: h.Boosts.Date},
	}
	if h.From != "" {
		out.Factors.Via = "session"
		if h.Session == "" {
			out.Factors.Via = "episode"
		}
	}
	if h.Result.Status == score.Superseded {
		out.ReplacedBy = h.ReplacedBy
	}
	if out.GroupID == "" {
		out.GroupID = h.Record.GroupID()
	}
	if out.ReplacedBy != "" {
		out.InvalidAt = h.InvalidAt.UTC().Format(time.RFC3339Nano)
	}
	return out
}

// roundScore keeps six significant decimals: enough to rank, stable to print.
func roundScore(s float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(s, 'f', 6, 64), 64)
	return v
}

// printHits writes the human-readable answer: a header line per hit, then
// its text indented.
func printHits(env *Env, res searchResult, explain bool) {
	if len(res.Results) == 0 {
		fmt.Fprintln(env.Stdout, "no results")
		return
	}
	for i, h := range res.Results {
		if i > 0 {
			fmt.Fprintln(env.Stdout)
		}
		flags := ""
		if h.Scope == string(journal.ScopeShared) {
			flags += " shared"
		}
		if h.ReplacedBy != "" {
			flags += " superseded-by:" + h.ReplacedBy
		}
		fmt.Fprintf(env.Stdout, "%d. [%.3f] %s %s %s%s  %s:%d  %s\n", i+1, h.Score, h.Kind, h.TS, h.Agent, flags, h.Path, h.Line, h.UUID)
		if h.Status != string(score.Active) {
			fmt.Fprintf(env.Stdout, "   status: %s\n", h.Status)
		}
		if explain {
			f := h.Factors
			// The factors multiply into the score; the values they come
			// from (importance 0.50 is a factor of 0.9000) go on the next
			// line under their own names, never a factor's.
			order := ""
			if f.Order != 1 && f.Order != 0 {
				order = fmt.Sprintf(" x order factor %.6f", f.Order)
			}
			fmt.Fprintf(env.Stdout, "   score %.6f = relevance %.6f x importance factor %.4f x freshness factor %.4f x confidence factor %.4f x status factor %.4f%s\n",
				h.Score, f.Relevance, f.Importance, f.Freshness, f.Confidence, f.Status, order)
			terms := "terms"
			if f.Terms == 1 {
				terms = "term"
			}
			held := ""
			if f.Held != "" {
				held = " (" + f.Held + ")"
			}
			fmt.Fprintf(env.Stdout, "   (holds %d query %s%s; importance %.2f, freshness %.2f, confidence %.2f, status %s; lexical %.6g)\n",
				f.Terms, terms, held, h.Importance, h.Freshness, h.Confidence, h.Status, h.Lexical)
			if f.Beside != "" {
				fmt.Fprintf(env.Stdout, "   (%s neighbour of %s: relevance inherited from that hit, recall.Alpha over the distance)\n", f.Via, f.Beside)
			}
			if f.TimeWord != 0 || f.DateMatch != 0 {
				var parts []string
				if f.TimeWord != 0 {
					parts = append(parts, fmt.Sprintf("time word %.2f (the query asks when; the text names a time)", f.TimeWord))
				}
				if f.DateMatch != 0 {
					parts = append(parts, fmt.Sprintf("date match %.2f (its ts falls in the time the query names)", f.DateMatch))
				}
				fmt.Fprintf(env.Stdout, "   (relevance holds: %s)\n", strings.Join(parts, "; "))
			}
			if f.Order != 0 && f.Order < 1 {
				fmt.Fprintf(env.Stdout, "   (order: held below a memory holding more of the query's terms, or the hit whose session neighbour it is)\n")
			}
			if p := h.Retrieval; p != nil {
				fmt.Fprintf(env.Stdout, "   relevance parts: lexical %s + vector %s = fused %.6g (reciprocal rank fusion, k=%d)\n",
					rankPart(p.LexicalRank, "score", p.Lexical), rankPart(p.VectorRank, "cosine", p.Cosine), p.Fused, recallrule.RRFK)
			}
		}
		if h.Source != nil && (h.Source.Type != "" || h.Source.Actor != "") {
			fmt.Fprintf(env.Stdout, "   source: %s\n", strings.TrimSpace(h.Source.Type+" "+h.Source.Actor))
		}
		for _, l := range strings.Split(strings.TrimRight(h.Text, "\n"), "\n") {
			fmt.Fprintf(env.Stdout, "   %s\n", strings.TrimRight(l, "\r"))
		}
	}
}

// parseSince reads --since (memsync.ParseSince).
func parseSince(s string, now time.Time) (time.Time, error) { return memsync.ParseSince(s, now) }

// oneLineErr is err's message on one line.
func oneLineErr(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// dashQuery returns the first argument before "--" that looks like a flag
// but names none of fs's (and is not a flag's value): most likely a query
// word that begins with -, which the flag parser would reject without
// saying what to do.
func dashQuery(fs *flag.FlagSet, args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return ""
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if name == "h" || name == "help" {
			return ""
		}
		f := fs.Lookup(name)
		if f == nil {
			if cmdline.Suggest(name, cmdline.FlagNames(fs)) != "" {
				return "" // a mistyped flag (--agnet): the parser says which it meant
			}
			return a
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) {
			i++ // its value
		}
	}
	return ""
}

// rankPart prints one retrieval's part of a fused relevance.
func rankPart(rank int, what string, v float64) string {
	if rank == 0 {
		return "(not found)"
	}
	return fmt.Sprintf("rank %d (%s %.4g)", rank, what, v)
}
