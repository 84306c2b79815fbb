package memsync

import (
	"context"
	"time"

	"github.com/memsync/memsync/journal"
)

// This file holds what the one search recipe (package read: Search and
// Rank) asks of a search engine: the Retriever primitives, the Filter
// every primitive honours and what they return. A backend (the embedded
// store, Neo4j) and the offline journal reader implement them, each with
// its own engine; the recipe itself is in package read, once, so that
// every path ranks the same candidates the same way. The engine owns
// these types so that no backend imports the read path.

// DefaultSearchLimit is the number of hits a search returns when the query
// sets none.
const DefaultSearchLimit = 10

// Filter is what a search asks of the memories it may return, lexical
// hits, neighbours and vector candidates alike.
type Filter struct {
	Groups []string       // the group_ids the reader may see; empty sees nothing
	Kinds  []journal.Kind // empty: every kind
	Since  time.Time      // zero: no lower bound on ts
	All    bool           // superseded memories count too
}

// Found is a memory a retrieval found, with the retrieval's score: bm25
// (higher is better) from Lexical, the cosine similarity from Similar.
type Found struct {
	Node
	Score float64
}

// Beside is, for the source memory From, the memories of its agent and
// session nearest to it in time (its agent's sessionless memories when it
// names no session): Before and After, nearest first, at most
// recall.Window each.
type Beside struct {
	From          string
	Before, After []Node
}

// Retriever is what a search engine gives the recipe. A memory that one
// primitive names and that the engine can no longer read (it vanished
// between two reads) is simply not returned: the recipe never fails for
// it. Every primitive honours f.
type Retriever interface {
	// Lexical returns the pool best lexical matches of any of terms
	// (analysis.QueryTerms) that f lets through, best first: by score,
	// then newest, then uuid. Text counts in full; tags and declared
	// entities at half weight.
	Lexical(ctx context.Context, terms []string, f Filter, pool int) ([]Found, error)
	// Neighbours returns, for each of sources (lexical hits), the
	// memories of the same agent and session nearest to it in time (by
	// ts, then uuid) that f lets through, at most recall.Window each side;
	// for a source that names no session, the same agent's memories that
	// name none. (The recipe cuts those at recall.EpisodeGap.)
	Neighbours(ctx context.Context, sources []Node, f Filter) ([]Beside, error)
	// Similar returns up to pool memories f lets through whose vectors are
	// nearest to text's, any order; none when no embedder is configured.
	Similar(ctx context.Context, text string, f Filter, pool int) ([]Found, error)
}

// Pinner is a Retriever whose reads can be held to one snapshot (Neo4j's
// generation): every read under the context Pin returns sees the same one.
type Pinner interface {
	Pin(ctx context.Context) context.Context
}

// SearchOpener is a Retriever that reads best with one state per search:
// the offline path reads every journal once for a search, not once per
// primitive. OpenSearch returns the Retriever the search of q reads
// through; its primitives are asked with q's terms and filter only.
type SearchOpener interface {
	OpenSearch(ctx context.Context, q SearchQuery) (Retriever, error)
}
