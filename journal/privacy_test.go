package journal_test

import (
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

func TestSeesAndRetires(t *testing.T) {
	shared, a, b := journal.SharedGroup, journal.PrivateGroup("a"), journal.PrivateGroup("b")
	tests := []struct {
		name          string
		agent         string
		src, dst      string
		sees, retires bool
	}{
		{"shared record, shared memory", "a", shared, shared, true, true},
		{"shared record, own private memory", "a", shared, a, true, true},
		{"shared record, another's private memory", "a", shared, b, false, false},
		{"private record, own private memory", "a", a, a, true, true},
		{"private record, shared memory", "a", a, shared, true, false},
		{"private record, another's private memory", "a", a, b, false, false},
		{"a record claiming another's group", "a", b, b, false, false},
		{"agent whose name prefixes another's", "a", shared, journal.PrivateGroup("ab"), false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := journal.Sees(tc.agent, tc.dst); got != tc.sees {
				t.Errorf("Sees(%q, %q) = %v, want %v", tc.agent, tc.dst, got, tc.sees)
			}
			if got := journal.Retires(tc.agent, tc.src, tc.dst); got != tc.retires {
				t.Errorf("Retires(%q, %q, %q) = %v, want %v", tc.agent, tc.src, tc.dst, got, tc.retires)
			}
		})
	}
}

// TestReaderGroupsAreWhatSees is the list and the predicate agreeing: a
// reader's query names exactly the groups the reader sees.
func TestReaderGroupsAreWhatSees(t *testing.T) {
	got := journal.ReaderGroups("a")
	want := []string{journal.SharedGroup, journal.PrivateGroup("a")}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("ReaderGroups(a) = %q, want %q", got, want)
	}
	for _, g := range got {
		if !journal.Sees("a", g) {
			t.Errorf("ReaderGroups(a) names %q, which a does not see", g)
		}
	}
	for _, g := range []string{journal.PrivateGroup("b"), journal.PrivateGroup("ab"), ""} {
		if journal.Sees("a", g) {
			t.Errorf("a sees %q, which ReaderGroups(a) does not name", g)
		}
	}
}

func TestGroupAgent(t *testing.T) {
	for _, tc := range []struct {
		group, agent string
		ok           bool
	}{
		{journal.PrivateGroup("mira"), "mira", true},
		{journal.SharedGroup, "", false},
		{journal.PrivateGroup(""), "", false},
		{"elsewhere", "", false},
	} {
		if a, ok := journal.GroupAgent(tc.group); a != tc.agent || ok != tc.ok {
			t.Errorf("GroupAgent(%q) = %q, %v; want %q, %v", tc.group, a, ok, tc.agent, tc.ok)
		}
	}
}

// TestRetiresFirst: the earliest superseder wins, the smallest uuid on a
// tie, and any superseder beats none.
func TestRetiresFirst(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		ts       time.Time
		uuid, by string
		at       time.Time
		want     bool
	}{
		{"none so far", t0, "mem_b", "", time.Time{}, true},
		{"earlier", t0, "mem_z", "mem_a", t0.Add(time.Nanosecond), true},
		{"later", t0.Add(time.Second), "mem_a", "mem_z", t0, false},
		{"a tie, smaller uuid", t0, "mem_a", "mem_b", t0, true},
		{"a tie, larger uuid", t0, "mem_c", "mem_b", t0, false},
		{"itself", t0, "mem_b", "mem_b", t0, false},
	} {
		if got := journal.RetiresFirst(tc.ts, tc.uuid, tc.at, tc.by); got != tc.want {
			t.Errorf("%s: RetiresFirst = %v, want %v", tc.name, got, tc.want)
		}
	}
}
