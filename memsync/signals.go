package memsync

import (
	"context"
	"time"

	"github.com/memsync/memsync/memsync/recall"
	"github.com/memsync/memsync/memsync/score"
)

// This file holds what scoring and ranking (package read: ScoreNodes,
// Explain, Rank) read and return. The engine owns these types; the
// rules that fill them are in package read.

// SignalReader is what scoring reads: the memories and the records that
// name them. Every Graph is one; so is the offline path.
type SignalReader interface {
	Get(ctx context.Context, uuids []string) (map[string]Node, error)
	Incoming(ctx context.Context, uuids []string) ([]Reference, error)
}

// Searcher is what ranking reads: the signals, and the search recipe's
// primitives (Retriever). Every Graph is one; so is the offline path.
type Searcher interface {
	SignalReader
	Retriever
}

// Scored is a memory with what score.Evaluate says of it at a clock.
type Scored struct {
	Node
	Result    score.Result
	Freshness float64
}

// Clock is when a read looks at the memory (SPEC §7 "The clock"). At is
// the time every rule is evaluated at. With Cutoff (an explicit --as-of)
// records dated after At are left out, as the memory stood then; without
// it (a read at the present) every projected record is seen, and one
// dated after At (another host's clock runs ahead, a typo) counts as
// written at At: its age is zero.
type Clock struct {
	At     time.Time
	Cutoff bool
}

// Present is the clock of a read at now: every record seen.
func Present(now time.Time) Clock { return Clock{At: now.UTC()} }

// AsOf is the clock of a read as the memory stood at t.
func AsOf(t time.Time) Clock { return Clock{At: t.UTC(), Cutoff: true} }

// Hides reports whether the clock leaves out a record dated ts.
func (c Clock) Hides(ts time.Time) bool { return c.Cutoff && ts.After(c.At) }

// Clamp is ts as the clock counts it: a time after a present clock is
// At (its age is zero); any other time, and every time under a Cutoff
// clock (which Hides what is after At instead), is ts itself.
func (c Clock) Clamp(ts time.Time) time.Time {
	if !c.Cutoff && ts.After(c.At) {
		return c.At
	}
	return ts
}

// Ranked is one ranked search result with every factor of its score.
type Ranked struct {
	Scored
	Lexical float64       // the backend's relevance score (package recall: lexical, or fused with vectors)
	Parts   recall.Parts  // the lexical and vector parts of Lexical (recall.Fuse)
	Match   uint64        // the query terms it holds (recall.Ranked.Match)
	Fields  recall.Fields // where it holds them (text, tags, entities)
	Held    string        // the same as explain names it: "text: postgres; tag: billing"
	From    string        // for a neighbour that is no lexical hit: the hit that brought it in
	Boosts  recall.Boosts // the factors of time its relevance holds
	Factors score.Factors // the blend, factor by factor (score.Blend)
	Score   float64       // Factors.Score
}

// RankQuery is a search ranked by SPEC §7's blend.
type RankQuery struct {
	SearchQuery       // Limit is the number of results; All adds superseded and wrong-flagged memories
	Clock       Clock // when the query reads (Present, or AsOf an explicit --as-of)
}
