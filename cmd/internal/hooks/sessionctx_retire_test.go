package hooks

import (
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// TestSessionContextRetiresAsTheGraph: the session's starting context
// leaves out what the agent's records retire by journal.Retires, as search
// does: the agent's private record does not hide its shared memory.
func TestSessionContextRetiresAsTheGraph(t *testing.T) {
	priv, shared := journal.PrivateGroup("a"), journal.SharedGroup
	for _, tc := range []struct {
		target journal.Scope
		by     string
		want   bool
	}{
		{journal.ScopeShared, priv, false},
		{journal.ScopeShared, shared, true},
		{journal.ScopePrivate, priv, true},
		{journal.ScopePrivate, shared, true},
	} {
		s := retiredSet{"mem_x": {tc.by}}
		m := memsync.Memory{Record: journal.Record{UUID: "mem_x", Agent: "a", Scope: tc.target}}
		if got := s.has("a", m); got != tc.want {
			t.Errorf("%s memory superseded by a record of %s: retired %v, want %v", tc.target, tc.by, got, tc.want)
		}
	}
}
