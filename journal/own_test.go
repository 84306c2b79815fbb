package journal_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

// TestCheckOwnerOwnRecords: memsync's own uuids (promotions, consolidation
// actions) are valid only in the form and the journal memsync writes them
// in (issue 25 §2: a promotion line under another agent's future promotion
// uuid blocked that agent's promotion and put the squatter's text under
// it). Every case is a line as an agent could write it in the journal of
// owner; the records memsync itself writes pass.
func TestCheckOwnerOwnRecords(t *testing.T) {
	ts := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	bOrig := "mem_20261121T090000Z_b_host1-0001"
	aOrig := "mem_20261121T090000Z_a_0003"
	extra := func(kv ...string) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		for i := 0; i < len(kv); i += 2 {
			b, _ := json.Marshal(kv[i+1])
			m[kv[i]] = b
		}
		return m
	}
	promo := func(uuid string, links ...string) journal.Record {
		return journal.Record{UUID: uuid, TS: ts, Agent: "a", Kind: journal.KindPromotion, Scope: journal.ScopeShared, Text: "t", Links: links}
	}
	consol := func(uuid string, kv []string, links ...string) journal.Record {
		return journal.Record{UUID: uuid, TS: ts, Agent: "a", Kind: journal.KindFeedback, Scope: journal.ScopePrivate, Text: "t", Links: links, Extra: extra(kv...)}
	}
	themeKey := []string{"a", "db", aOrig, "mem_20261121T090000Z_a_0004"}
	for _, tc := range []struct {
		name string
		rec  journal.Record
		err  string // "" when a's journal may hold it
	}{
		{"memsync's promotion of a's memory", promo(journal.PromotionUUID(aOrig), aOrig), ""},
		{"promotion of a memory whose uuid names no agent", promo(journal.PromotionUUID("note-7"), "note-7"), ""},
		{"a squats b's future promotion", promo(journal.PromotionUUID(bOrig), bOrig), "a memory of agent b"},
		{"promotion under an ordinary uuid", promo("mem_20261121T100000Z_a_0009", aOrig), "a promotion is memsync's own record"},
		{"promotion under another memory's promotion uuid", promo(journal.PromotionUUID(aOrig), "mem_20261121T090000Z_a_0004"), "a promotion is memsync's own record"},
		{"promotion with two links", promo(journal.PromotionUUID(aOrig), aOrig, bOrig), "a promotion is memsync's own record"},
		{"a fact under b's promotion uuid", journal.Record{UUID: journal.PromotionUUID(bOrig), TS: ts, Agent: "a", Kind: journal.KindFact, Scope: journal.ScopePrivate, Text: "t"}, "only memsync's promotion records carry it"},
		{"a fact under a promotion-like uuid", journal.Record{UUID: "mem_promo_anything", TS: ts, Agent: "a", Kind: journal.KindFact, Scope: journal.ScopePrivate, Text: "t"}, "only memsync's promotion records carry it"},
		{"consolidation theme of a", consol(journal.ConsolidationUUID(journal.ConsolidationTheme, themeKey...),
			[]string{journal.FieldConsolidation, journal.ConsolidationTheme, "topic", "db"}, themeKey[2:]...), ""},
		{"b's theme in a's journal", consol(journal.ConsolidationUUID(journal.ConsolidationTheme, append([]string{"b"}, themeKey[1:]...)...),
			[]string{journal.FieldConsolidation, journal.ConsolidationTheme, "topic", "db"}, themeKey[2:]...), "is not the uuid memsync's consolidation of a derives"},
		{"consolidation prune of a", consol(journal.ConsolidationUUID(journal.ConsolidationPrune, "a", "duplicate", aOrig),
			[]string{journal.FieldConsolidation, journal.ConsolidationPrune, "reason", "duplicate"}, aOrig), ""},
		{"follow-up of a's decision", consol(journal.ConsolidationUUID(journal.ConsolidationFollowUp, aOrig),
			[]string{journal.FieldConsolidation, journal.ConsolidationFollowUp}, aOrig), ""},
		{"a squats b's follow-up", consol(journal.ConsolidationUUID(journal.ConsolidationFollowUp, bOrig),
			[]string{journal.FieldConsolidation, journal.ConsolidationFollowUp}, bOrig), "a memory of agent b"},
		{"verify of a's core memory", consol(journal.ConsolidationUUID(journal.ConsolidationVerify, aOrig, bOrig),
			[]string{journal.FieldConsolidation, journal.ConsolidationVerify}, aOrig, bOrig), ""},
		{"verify with one link", consol(journal.ConsolidationUUID(journal.ConsolidationVerify, aOrig),
			[]string{journal.FieldConsolidation, journal.ConsolidationVerify}, aOrig), "is not the uuid"},
		{"consolidation uuid without the field", consol(journal.ConsolidationUUID(journal.ConsolidationFollowUp, aOrig), nil, aOrig),
			`with the "consolidation" field`},
		{"consolidation uuid of an unknown action", consol(journal.ConsolidationUUID("merge", aOrig),
			[]string{journal.FieldConsolidation, "merge"}, aOrig), "is not the uuid"},
		{"an ordinary record", journal.Record{UUID: "mem_20261121T100000Z_a_0009", TS: ts, Agent: "a", Kind: journal.KindFact, Scope: journal.ScopePrivate, Text: "t", Links: []string{bOrig}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.rec.Validate(); err != nil {
				t.Fatalf("the case is not a valid record: %v", err)
			}
			err := journal.CheckOwner(&tc.rec, "a")
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("CheckOwner = %v, want %q", err, tc.err)
			}
		})
	}
}

// TestOwnUUIDsAreStable: the derivations are the ones memsync has always
// written (moving them into journal changed no uuid a journal holds).
func TestOwnUUIDsAreStable(t *testing.T) {
	if got, want := journal.PromotionUUID("mem_20261121T090000Z_b_0001"), "mem_promo_"; !strings.HasPrefix(got, want) || len(got) != len(want)+20 {
		t.Fatalf("PromotionUUID = %q", got)
	}
	for _, tc := range []struct{ got, want string }{
		{journal.PromotionUUID("x"), promoOfX},
		{journal.ConsolidationUUID("follow-up", "x"), followUpOfX},
	} {
		if tc.got != tc.want {
			t.Fatalf("uuid %s, want %s", tc.got, tc.want)
		}
	}
}

// The old formulas, computed apart (sha256 of "promotion\x00x" and of
// "consolidation\x00follow-up\x00x", 10 bytes in hex).
const (
	promoOfX    = "mem_promo_4b7e612872c10f20b9fa"
	followUpOfX = "mem_consol_1b5bfdfb39591724d595"
)
