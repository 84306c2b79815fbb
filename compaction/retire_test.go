package compaction

import (
	"testing"

	"github.com/memsync/memsync/journal"
)

// TestFoldRetiresAsTheGraph: MEMORY.md leaves out what the agent's own
// records retire by journal.Retires, as search does: a private record does
// not retire the agent's shared memory (others still read it), a shared
// one does, and either retires the agent's private memory.
func TestFoldRetiresAsTheGraph(t *testing.T) {
	priv, shared := journal.PrivateGroup("a"), journal.SharedGroup
	for _, tc := range []struct {
		name   string
		target journal.Scope
		by     string
		want   bool
	}{
		{"private record, shared memory", journal.ScopeShared, priv, false},
		{"shared record, shared memory", journal.ScopeShared, shared, true},
		{"private record, private memory", journal.ScopePrivate, priv, true},
		{"shared record, private memory", journal.ScopePrivate, shared, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fold{superseded: map[string][]string{"mem_x": {tc.by}}}
			r := &journal.Record{UUID: "mem_x", Agent: "a", Scope: tc.target}
			if got := f.retired(r); got != tc.want {
				t.Fatalf("retired = %v, want %v", got, tc.want)
			}
		})
	}
}
