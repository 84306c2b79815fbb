package journal_test

import (
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

func TestUUIDOwner(t *testing.T) {
	for _, tc := range []struct {
		uuid, agent string
		ok          bool
	}{
		{"mem_20261121T101500Z_planner_0001", "planner", true},
		{"mem_20261121T101500Z_planner_12345", "planner", true},
		{"mem_20261121T101500Z_my_agent-2_0007", "my_agent-2", true},
		{"mem_20261121T101500Z_b_h0123456789abcdef", "b", true},
		{"mem_20261121T101500Z_planner_x7k2q9ab-0001", "planner", true}, // with a host id (SPEC §12)
		{"mem_20261121T101500Z_my_agent-2_x7k2q9ab-0007", "my_agent-2", true},
		{"mem_20261121T101500Z_b_X7K2-0001", "", false}, // host ids are lowercase
		{"mem_20261121T101500Z_b_x7k2-001", "", false},  // three digits
		{"mem_20261121T101500Z_b_-0001", "", false},     // no host
		{"mem_20261121T101500Z_b_x7k2-0001-2", "", false},
		{"mem_20261121T101500Z_planner_0001-k3j4h5g6", "planner", true},            // with a random part
		{"mem_20261121T101500Z_my_agent-2_x7k2-0007-k3j4h5g6", "my_agent-2", true}, // host and random part
		{"mem_20261121T101500Z_b_x7k2-0001-K3J4H5G6", "", false},                   // random parts are lowercase
		{"mem_20261121T101500Z_b_x7k2-0001-k3j4h5g", "", false},                    // seven characters
		{"mem_20261121T101500Z_b_x7k2-0001-k3j4h5g1", "", false},                   // 1 is not base32
		{"mem_20261121T101500Z_b_x7k2-001-k3j4h5g6", "", false},                    // three digits
		{"mem_20261121T101500Z_b_k3j4h5g6", "", false},                             // no sequence
		{"mem_20261121T101500Z_b_-k3j4h5g6", "", false},
		{"mem_20261121T101500Z_b_001", "", false},               // three digits: not what append writes
		{"mem_20261121T101500Z_b_h0123456789ABCDEF", "", false}, // DerivedUUID writes lowercase hex
		{"mem_20261121T101500Z_b_note", "", false},
		{"mem_20261121T101500Z__0001", "", false},
		{"mem_2026112T101500Z_b_0001", "", false},
		{"mem_2026112aT101500Z_b_0001", "", false},
		{"mem_20261121T101500Zb_0001", "", false},
		{"mem_20261121T101500Z_0001", "", false},
		{"m1", "", false},
		{"", "", false},
	} {
		agent, ok := journal.UUIDOwner(tc.uuid)
		if agent != tc.agent || ok != tc.ok {
			t.Errorf("UUIDOwner(%q) = %q, %v; want %q, %v", tc.uuid, agent, ok, tc.agent, tc.ok)
		}
	}
}

// The uuids memsync writes name their writer.
func TestUUIDOwnerOfWrittenUUIDs(t *testing.T) {
	r := journal.Record{TS: time.Date(2026, 11, 21, 10, 15, 0, 0, time.UTC), Agent: "critic_2", Kind: journal.KindFact, Scope: journal.ScopePrivate, Text: "x"}
	if agent, ok := journal.UUIDOwner(journal.DerivedUUID(&r)); !ok || agent != "critic_2" {
		t.Fatalf("DerivedUUID names %q, %v", agent, ok)
	}
	dir := t.TempDir()
	if _, err := journal.Append(dir, &r, journal.AppendOptions{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	if agent, ok := journal.UUIDOwner(r.UUID); !ok || agent != "critic_2" {
		t.Fatalf("Append's %s names %q, %v", r.UUID, agent, ok)
	}
}

func TestCheckOwner(t *testing.T) {
	for _, tc := range []struct {
		name, uuid, agent, owner, err string
	}{
		{"own uuid", "mem_20261121T101500Z_a_0001", "a", "a", ""},
		{"uuid of no agent", "decision-42", "a", "a", ""},
		{"another agent's uuid", "mem_20261121T101500Z_b_0001", "a", "a", `field "uuid": mem_20261121T101500Z_b_0001 names agent b, but the journal belongs to a`},
		{"another agent's record", "x1", "b", "a", `field "agent": "b" cannot write in a's journal`},
		{"prefix is not enough", "mem_20261121T101500Z_a_b_0001", "a", "a", "names agent a_b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := journal.Record{UUID: tc.uuid, Agent: tc.agent}
			err := journal.CheckOwner(&r, tc.owner)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("CheckOwner = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestClashWins(t *testing.T) {
	at := func(sec int) time.Time { return time.Date(2026, 11, 21, 10, 0, sec, 0, time.UTC) }
	v := func(scope journal.Scope, sec int, hash string) journal.Version {
		return journal.Version{Scope: scope, TS: at(sec), Hash: hash}
	}
	priv, shared := journal.ScopePrivate, journal.ScopeShared
	for _, tc := range []struct {
		name string
		a, b journal.Version
		want bool // a wins over b
	}{
		{"private beats an earlier shared", v(priv, 9, "ff"), v(shared, 1, "00"), true},
		{"shared loses to a later private", v(shared, 1, "00"), v(priv, 9, "ff"), false},
		{"earlier ts", v(shared, 1, "ff"), v(shared, 2, "00"), true},
		{"later ts", v(priv, 2, "00"), v(priv, 1, "ff"), false},
		{"same ts: smaller hash", v(priv, 1, "0a"), v(priv, 1, "0b"), true},
		{"same ts: larger hash", v(priv, 1, "0b"), v(priv, 1, "0a"), false},
		{"same content: neither", v(priv, 1, "0a"), v(priv, 1, "0a"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := journal.ClashWins(tc.a, tc.b); got != tc.want {
				t.Fatalf("ClashWins = %v, want %v", got, tc.want)
			}
			if tc.a.Hash != tc.b.Hash && journal.ClashWins(tc.b, tc.a) == tc.want {
				t.Fatal("not antisymmetric: both or neither win")
			}
		})
	}
}

// FuzzUUIDOwner: whatever the input, an owner it names is a valid agent,
// and the uuid is exactly what append or DerivedUUID would write for it.
//
//	go test -run='^$' -fuzz=FuzzUUIDOwner -fuzztime=15s ./journal/
func FuzzUUIDOwner(f *testing.F) {
	for _, s := range []string{"mem_20261121T101500Z_planner_0001", "mem_20261121T101500Z_a_b_h0123456789abcdef",
		"mem_20261121T101500Z__0001", "mem_99999999T999999Z_x_0000", "mem_", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uuid string) {
		agent, ok := journal.UUIDOwner(uuid)
		if !ok {
			if agent != "" {
				t.Fatalf("no owner, but agent %q", agent)
			}
			return
		}
		if !journal.ValidAgent(agent) {
			t.Fatalf("owner %q is not a valid agent", agent)
		}
		for i, c := range uuid[4:20] {
			if i != 8 && i != 15 && (c < '0' || c > '9') {
				t.Fatalf("%q: time %q is not YYYYMMDDTHHMMSSZ", uuid, uuid[4:20])
			}
		}
		if !strings.HasPrefix(uuid, "mem_"+uuid[4:20]+"_"+agent+"_") {
			t.Fatalf("%q does not start with its owner %q", uuid, agent)
		}
	})
}
