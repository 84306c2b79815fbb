// Package feedback journals a person's flag on a memory (SPEC §7): the one
// way `memsync flag` and the web view write one, so both write the same
// record under the same rule.
package feedback

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// ErrNotVisible means the writer may not see the memory (or is not an
// agent of the repository): nothing is written, exactly as for an
// unknown uuid.
var ErrNotVisible = errors.New("memory not visible to the writing agent")

// ErrUnknownFeedback means the value is none of journal.Feedbacks.
var ErrUnknownFeedback = errors.New("unknown feedback")

// Flag is one flag to journal.
type Flag struct {
	// Feedback is one of journal.Feedbacks.
	Feedback string
	// By is the person flagging; "human" when empty.
	By string
	// Note is why, kept in the record's text.
	Note string
	// Writer is the agent whose journal holds the flag; the memory's
	// author when empty. It must be an agent of the repository that may
	// see the memory.
	Writer string
}

// Options are how the record is appended.
type Options struct {
	FSync bool
	Now   func() time.Time
}

// Result is what was journaled.
type Result struct {
	Record journal.Record
	// Path is the journal file, relative to the repository root.
	Path string
}

// Journal appends f on memory n (found through the graph or the
// journals) to the writer's journal: a feedback record, source "told" by
// f.By, linking to n, shared when n is. A writer that may not see n, or
// is not one of the repository's agents, is ErrNotVisible.
func Journal(l memsync.Layout, n memsync.Node, f Flag, opts Options) (Result, error) {
	if !slices.Contains(journal.Feedbacks, f.Feedback) {
		return Result{}, fmt.Errorf("%w %q (one of %v)", ErrUnknownFeedback, f.Feedback, journal.Feedbacks)
	}
	writer := f.Writer
	if writer == "" {
		writer = n.Agent
	}
	agents, err := l.Agents()
	if err != nil {
		return Result{}, fmt.Errorf("list agents: %w", err)
	}
	if !slices.Contains(agents, writer) || !journal.Sees(writer, n.Record.GroupID()) {
		return Result{}, fmt.Errorf("%s as %s: %w", n.UUID, writer, ErrNotVisible)
	}
	actor := f.By
	if actor == "" {
		actor = "human"
	}
	text := fmt.Sprintf("%s flagged %s %s", actor, n.UUID, f.Feedback)
	if f.Note != "" {
		text += ": " + f.Note
	}
	fb, _ := json.Marshal(f.Feedback)
	rec := journal.Record{
		Agent: writer, Kind: journal.KindFeedback, Scope: n.Scope, Text: text, Links: []string{n.UUID},
		Source: &journal.Source{Type: "told", Actor: actor},
		Extra:  map[string]json.RawMessage{journal.FieldFeedback: fb},
	}
	host, err := journal.HostID(l.Root)
	if err != nil {
		return Result{}, fmt.Errorf("host id: %w", err)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	ao := journal.AppendOptions{NoSync: !opts.FSync, Now: now,
		SequenceFile: l.SequenceFile(writer), Root: l.Root, Host: host, Random: rand.Reader}
	path, err := journal.Append(l.JournalDir(writer), &rec, ao)
	if err != nil {
		return Result{}, fmt.Errorf("append flag to %s's journal: %w", writer, err)
	}
	return Result{Record: rec, Path: l.Rel(filepath.Clean(path))}, nil
}
