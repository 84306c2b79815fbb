// Package read is the one read path every door takes (the search, list,
// packet, explain and show commands, the hooks, the MCP server, the web
// view): the graph when it answers, else the journals, ranked and
// filtered by the same functions either way. A door opens a Reader and
// asks it; it never carries its own graph-else-journals fallback.
//
// Those functions are here too: the one search recipe (Search) over a
// backend's memsync.Retriever primitives, scoring at a clock
// (ScoreNodes, Explain, History, with a promotion following its original,
// FollowOriginal) over a memsync.SignalReader, and ranking (Rank), which
// blends the two. The engine (package memsync) owns the interfaces and
// types they read and return, so that a backend implements them without
// importing this package.
package read

import (
	"context"
	"fmt"

	"github.com/memsync/memsync/memsync"
)

// Reader is one read's source: the graph, or the journals when the graph
// could not be opened or answered its probe with an error, and the
// journals to fall back on when the graph fails while answering.
type Reader struct {
	// From answers first: the graph, or the journals when Offline.
	From memsync.Searcher
	// Journals answers when the graph fails; nil when From is already
	// the journals.
	Journals memsync.Searcher
	// Offline says the journals answered, and Reason why.
	Offline bool
	Reason  string
	// Graph names the graph in a fallback's reason ("embedded", "neo4j").
	Graph string
	// Check, when set, is asked after the graph answered: an error (a
	// rebuild begun meanwhile may have dropped what the graph read) makes
	// the journals answer instead.
	Check func() error
	// Suffix ends every reason (what the journals do for vectors).
	Suffix string
	// Note, when set, is told the reason of a fallback the moment it
	// happens (the door's line on stderr).
	Note func(reason error)

	close func()
}

// New is a Reader answering from the graph g, falling back on journals;
// closeGraph (may be nil) closes g.
func New(g memsync.Searcher, journals memsync.Searcher, closeGraph func()) *Reader {
	return &Reader{From: g, Journals: journals, close: closeGraph}
}

// Offline is a Reader whose graph could not be asked at all: the journals
// answer every read, for reason.
func Offline(journals memsync.Searcher, reason string) *Reader {
	return &Reader{From: journals, Offline: true, Reason: reason}
}

// Close closes the graph, once; a nil or offline Reader closes nothing.
func (r *Reader) Close() {
	if r == nil || r.close == nil {
		return
	}
	r.close()
	r.close = nil
}

// Read answers ask from r's source and, when the graph fails (not the
// context: a caller who gave up gets its error), from the journals,
// marking r Offline with the failure as its reason and telling Note.
func Read[T any](ctx context.Context, r *Reader, ask func(memsync.Searcher) (T, error)) (T, error) {
	return ReadUnless(ctx, r, ask, nil)
}

// ReadUnless is Read, except that an error final says is the answer's
// (one the journals would give too, such as an unknown role) is returned
// as it is, without asking the journals. A nil final is Read.
func ReadUnless[T any](ctx context.Context, r *Reader, ask func(memsync.Searcher) (T, error), final func(error) bool) (T, error) {
	v, err := ask(r.From)
	if r.Offline || r.Journals == nil {
		return v, err
	}
	if err == nil && r.Check != nil {
		err = r.Check()
	}
	if err == nil || final != nil && final(err) {
		return v, err
	}
	if ctx.Err() != nil {
		return v, ctx.Err()
	}
	r.Offline = true
	r.Reason = fmt.Sprintf("%s graph: %v%s", r.Graph, err, r.Suffix)
	if r.Note != nil {
		r.Note(err)
	}
	return ask(r.Journals)
}

// ReadMissing is Read that also asks the journals when the graph answered
// but lacks what was asked (missing says so: the daemon may not have
// projected an append yet). r is then Offline, its reason saying so, and
// Note is not told: nothing failed.
func ReadMissing[T any](ctx context.Context, r *Reader, ask func(memsync.Searcher) (T, error), missing func(T, error) bool) (T, error) {
	return ReadMissingUnless(ctx, r, ask, nil, missing)
}

// ReadMissingUnless is ReadMissing over ReadUnless: an error final says
// is the answer's does not send the read to the journals as a failure,
// though missing may still (a memory the graph does not show yet).
func ReadMissingUnless[T any](ctx context.Context, r *Reader, ask func(memsync.Searcher) (T, error), final func(error) bool, missing func(T, error) bool) (T, error) {
	v, err := ReadUnless(ctx, r, ask, final)
	if r.Offline || r.Journals == nil || !missing(v, err) {
		return v, err
	}
	r.Offline = true
	r.Reason = "not projected into the " + r.Graph + " graph yet: read from the journals" + r.Suffix
	return ask(r.Journals)
}

// Find is the memory uuid through r: the graph, and the journals when the
// graph cannot answer or has not projected it yet (ReadMissing); found is
// false when neither holds it.
func Find(ctx context.Context, r *Reader, uuid string) (n memsync.Node, found bool, err error) {
	nodes, err := ReadMissing(ctx, r, func(s memsync.Searcher) (map[string]memsync.Node, error) {
		return s.Get(ctx, []string{uuid})
	}, func(nodes map[string]memsync.Node, err error) bool { _, ok := nodes[uuid]; return err == nil && !ok })
	if err != nil {
		return memsync.Node{}, false, fmt.Errorf("read %s: %w", uuid, err)
	}
	n, found = nodes[uuid]
	return n, found, nil
}
