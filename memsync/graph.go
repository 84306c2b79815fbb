// Package memsync is the engine: it tails agents' journals and projects their
// records into a Graph, keeping cursors, an outbox for retries and a rejects
// file so that nothing appended is ever lost or projected twice. It owns the
// interfaces it needs; backends live in graph/... and never in here.
package memsync

import (
	"context"
	"errors"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/recall"
)

// Memory is a journal record together with where it was read from.
type Memory struct {
	journal.Record
	Path string // journal file, relative to the repository root, slash-separated
	Line int    // 1-based line number in Path

	// canon and hash are the record's canonical encoding and hash once
	// Encode has run; "" before.
	canon string
	hash  string

	// vec is the record's text embedded by the embedder of version vecOf
	// once Embed has run; nil and "" before.
	vec   []float32
	vecOf string
}

// Encode computes the record's canonical encoding and hash and keeps them
// with m, so that CanonicalHash and Hash return them at no cost. The engine
// encodes the records it reads on its reader goroutine, where the work
// overlaps the graph's write of the batch before, instead of on the writer.
// The kept values describe Record as it was when Encode ran: a caller that
// changes Record afterwards must call Encode again.
func (m *Memory) Encode() { m.canon, m.hash = m.Record.CanonicalStringHash() }

// Embed embeds the record's text with e and keeps the vector with m, so
// that Vector returns it at no cost: the engine embeds the records it
// reads, for a graph that stores vectors (VectorGraph), on its reader
// goroutine, as it encodes them. Like Encode's, the kept vector describes
// Text as it was when Embed ran.
func (m *Memory) Embed(e Embedder) { m.vec, m.vecOf = e.Embed(m.Text), e.Version() }

// Vector returns the record's text embedded by e: the vector Embed kept
// if it ran with a model of e's version, else computed now.
func (m *Memory) Vector(e Embedder) []float32 {
	if m.vec != nil && m.vecOf == e.Version() {
		return m.vec
	}
	return e.Embed(m.Text)
}

// CanonicalHash returns the record's canonical encoding and hash
// (journal.Record.CanonicalHash), computed by Encode if it ran, else now.
func (m *Memory) CanonicalHash() (canonical, hash string) {
	if m.hash != "" {
		return m.canon, m.hash
	}
	return m.Record.CanonicalStringHash()
}

// Hash returns the record's hash (journal.Record.Hash), computed by Encode
// if it ran, else now.
func (m *Memory) Hash() string {
	if m.hash != "" {
		return m.hash
	}
	return m.Record.Hash()
}

// Node is a projected memory as the graph holds it, with its outgoing edges.
// Two graphs that hold the same Nodes are the same projection.
type Node struct {
	Memory
	Hash          string    // journal.Record.Hash of the projected record
	GroupID       string    // journal.Record.GroupID
	InvalidAt     time.Time // earliest ts of a record retiring it (journal.Retires); zero if current
	ReplacedBy    string    // uuid of that record (smallest uuid on a tie)
	Importance    float64   // starts at 0.5
	LinksTo       []string  // sorted uuids
	Supersedes    []string  // sorted uuids
	ConflictsWith []string  // sorted uuids
	Mentions      []string  // sorted entity names (journal.Record.AllEntities)
}

// ApplyResult tells what a batch did.
type ApplyResult struct {
	// Mismatched holds the uuids of the batch that clashed: already
	// projected with different content, or in the batch twice with
	// different content. The graph holds the version journal.ClashWins
	// prefers; every other version is a reject.
	Mismatched []string
	// Displaced lists the memories projected before this batch that a
	// version in the batch won over and replaced: only UUID, Agent, Path
	// and Line are set.
	Displaced []Memory
}

// SearchQuery asks for ranked lexical recall.
type SearchQuery struct {
	Text   string   // free text, never interpreted as index query syntax
	Groups []string // the group_ids the reader may see; an empty list sees nothing
	Limit  int      // 0 means 10
	Kinds  []journal.Kind
	Since  time.Time // zero: no lower bound on ts
	All    bool      // include superseded (retired) memories
}

// Hit is one search result, in package recall's order.
type Hit struct {
	Node
	Score  float64       // the relevance (recall.Ranked.Score: lexical, or fused with vectors): higher ranks first
	Match  uint64        // the query terms it holds (recall.Ranked.Match)
	Fields recall.Fields // where it holds them: text, tags, entities
	From   string        // for a neighbour that is no lexical hit: the hit that brought it in
	Boosts recall.Boosts // the factors of time its relevance holds (recall.Boosts)
	Parts  recall.Parts
}

// The relations that carry importance signals into a memory (SPEC §4, §7).
const (
	RelLinksTo       = "LINKS_TO"
	RelSupports      = "SUPPORTS"
	RelConflictsWith = "CONFLICTS_WITH"
)

// Reference is a projected record naming a memory through a LINKS_TO,
// SUPPORTS or CONFLICTS_WITH edge: one signal for score.Evaluate.
type Reference struct {
	Target   string // the uuid named
	Relation string // RelLinksTo, RelSupports or RelConflictsWith
	Source   Node   // the record that names it
}

// Stats counts what a graph holds.
type Stats struct {
	Memories int            // projected memories (not placeholders for unseen edge targets)
	ByAgent  map[string]int // projected memories per authoring agent
}

// Graph is the projection target. Every method is safe for concurrent use.
//
// Apply must be idempotent: applying a record whose uuid is already projected
// with the same Hash changes nothing. Edges (LINKS_TO, SUPERSEDES,
// CONFLICTS_WITH, SUPPORTS) to uuids not yet projected must land and be complete once
// the target arrives; a superseded memory gets invalid_at (the earliest ts of
// a superseding record that retires it, journal.Retires) and replaced_by
// (that record's uuid), whatever the order in which the two arrive. The projection is a pure function of the set of
// records applied, not of their order or batching: when two records share a
// uuid with different content, the graph holds the one journal.ClashWins
// prefers, replacing (with its edges and mentions) a stored one that loses.
type Graph interface {
	// Apply projects a batch. An error wrapping ErrUnavailable means the
	// graph could not be reached and the whole batch may be retried later;
	// a *RecordError names a record that can never be applied.
	Apply(ctx context.Context, batch []Memory) (ApplyResult, error)
	// Drop deletes everything memsync projected (for rebuild).
	Drop(ctx context.Context) error
	// Stats counts projected memories.
	Stats(ctx context.Context) (Stats, error)
	// Walk calls fn for every projected memory in uuid order, streaming.
	Walk(ctx context.Context, fn func(Node) error) error
	// Hashes calls fn with the uuid and Hash of every projected memory,
	// once each, in any order, streaming: what Verify compares, without
	// decoding nodes.
	Hashes(ctx context.Context, fn func(uuid, hash string) error) error
	// Get returns the projected memories among uuids (absent ones are left out).
	Get(ctx context.Context, uuids []string) (map[string]Node, error)
	// Retriever gives the primitives of the one search recipe: a
	// search is read.Search(ctx, graph, q).
	Retriever
	// Incoming returns, in any order, every projected record that names
	// one of uuids through LINKS_TO, SUPPORTS or CONFLICTS_WITH, whatever
	// its group (importance is the memory's, not the reader's: callers
	// hide what the reader may not see). A record projected before its
	// target counts once the target lands.
	Incoming(ctx context.Context, uuids []string) ([]Reference, error)
	// Identity names the target (backend, address, database) so that
	// cursors can tell when it changed and everything must be re-projected.
	Identity() string
	// Close releases the backend's resources.
	Close() error
}

// Flusher is a Graph whose indexes may trail its writes (the embedded
// store indexes text on its own goroutine; its Search waits for it). Flush
// returns once everything applied so far is searchable; Rebuild calls it so
// that its time covers the whole projection.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Generations is a Graph that several hosts may share (Neo4j): Drop
// marks the graph with a new generation, and every engine projecting into
// it compares that generation with the one its cursors were made against,
// as it compares Identity. A daemon whose cursors predate a rebuild that
// another host ran re-projects its journals from zero, so that records
// git has not yet carried to the rebuilding host come back.
//
// It is a separate interface, not part of Graph, because only a shared
// graph needs it: the embedded store is host-local, one daemon per
// repository holds it, and a store replaced under a daemon is caught by
// StoreChecker. A Graph that does not implement it has one generation.
type Generations interface {
	// Generation names the graph's current generation: "" until a Drop
	// that marks one, then a new value after every Drop (written once
	// everything is deleted, so a reader that sees it sees the drop done).
	Generation(ctx context.Context) (string, error)
}

// Rebuilder is a Graph that builds a rebuild beside the projection it
// serves (Neo4j: a new generation), so that readers keep answering from
// the old projection until the new one is complete. Rebuild uses it
// instead of Drop when the Graph offers it.
type Rebuilder interface {
	// BeginRebuild starts an empty projection that this Graph's reads and
	// writes go to from now on (and Generations names), while other
	// clients keep using the current one.
	BeginRebuild(ctx context.Context) error
	// FinishRebuild makes that projection the graph's, atomically for
	// every reader; the old one is deleted afterwards.
	FinishRebuild(ctx context.Context) error
	// AbortRebuild gives the new projection up; readers never saw it.
	AbortRebuild(ctx context.Context) error
}

// BulkLoader is a Graph that can take a rebuild's batches without making
// each one durable as it acknowledges it (the embedded store: no fsync per
// commit). Rebuild calls BeginBulk after the drop and EndBulk at the end,
// whether the rebuild succeeded or not; EndBulk makes every batch
// acknowledged since BeginBulk durable and restores the usual guarantee.
// Rebuild writes no cursor in between (it holds them in memory), so a crash or a power
// cut during the load leaves the cursors where the drop put them, at the
// start of every journal: the next pass projects everything again, and a
// record the store kept is skipped as already projected.
//
// Nothing waits on one record during the load, so the load's batches may
// be larger than the daemon's: BulkBatchFactor times Options.BatchSize
// records per Apply (at least 1).
type BulkLoader interface {
	BeginBulk(ctx context.Context) error
	EndBulk(ctx context.Context) error
	BulkBatchFactor() int
}

// PartHasher is a Graph that can walk every memory's uuid and hash in
// parts at once, each part from a snapshot of its own: for a caller that
// knows nothing writes the graph meanwhile (the verify that ends a
// rebuild, under the repository's lock), where Hashes reads one snapshot.
type PartHasher interface {
	// HashParts calls fn from up to parts goroutines at once, with the
	// part's number (0 to parts-1, fewer if the graph offers fewer) and
	// each memory of that part, every memory in exactly one part. An error
	// from fn stops every part and is returned.
	HashParts(ctx context.Context, parts int, fn func(part int, uuid, hash string) error) error
}

// ReadOrder is the order in which a pass reads journal files.
type ReadOrder int

const (
	// ByDay reads day by day across agents (each agent's archive before its
	// journal for the same day): records come roughly in time order, so
	// indexes keyed by uuid (which starts with its time) grow at one end.
	ByDay ReadOrder = iota
	// ByAgent reads every file of one agent, then the next agent's: a batch
	// then mostly touches one agent.
	ByAgent
)

// ReadOrderer is a Graph that writes faster in another order than ByDay.
type ReadOrderer interface {
	ReadOrder() ReadOrder
}

// ErrUnavailable marks errors that mean the graph cannot be reached right
// now (down, timing out, transient failure); the batch may be retried.
var ErrUnavailable = errors.New("graph unavailable")

// RecordError is a record the graph refused for good.
type RecordError struct {
	UUID string
	Err  error
}

func (e *RecordError) Error() string { return "record " + e.UUID + ": " + e.Err.Error() }

func (e *RecordError) Unwrap() error { return e.Err }
