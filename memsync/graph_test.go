package memsync

import (
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

// TestMemoryEncode: CanonicalHash and Hash give journal.Record's answers
// whether or not Encode ran, and after Encode they are the values it kept
// (a Record changed afterwards is described as it was until Encode runs
// again, as documented).
func TestMemoryEncode(t *testing.T) {
	m := Memory{Record: journal.Record{UUID: "u1", TS: time.Date(2026, 11, 23, 10, 0, 0, 5, time.FixedZone("x", 3600)),
		Agent: "alice", Kind: journal.KindFact, Text: "the first text", Tags: []string{"a"}}}
	wantCanon, wantHash := m.Record.CanonicalHash()
	for _, encode := range []bool{false, true} {
		mm := m
		if encode {
			mm.Encode()
		}
		canon, hash := mm.CanonicalHash()
		if canon != string(wantCanon) || hash != wantHash || mm.Hash() != wantHash {
			t.Fatalf("encode=%t: CanonicalHash = %s, %s; Hash = %s; want %s, %s", encode, canon, hash, mm.Hash(), wantCanon, wantHash)
		}
	}
	m.Encode()
	m.Text = "changed"
	if m.Hash() != wantHash {
		t.Fatal("Hash after a change to Record must stay what Encode kept")
	}
	m.Encode()
	if m.Hash() == wantHash || m.Hash() != m.Record.Hash() {
		t.Fatal("Encode again must describe the changed Record")
	}
}
