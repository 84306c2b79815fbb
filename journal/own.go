package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// memsync writes some records itself, under uuids derived from what they
// act on so that every process and host that derives one writes the same
// record once: promotions (SPEC §7) and consolidation actions (SPEC §10).
// Those uuids are predictable by design, so an agent could write a line
// under another agent's future one first, and its line would stand for
// that uuid (or its kind would act as memsync's) for everyone. The rule
// here, applied by CheckOwner on every path that judges a line (the
// engine's pass, the offline reader, verify, rebuild, history), keeps
// them valid only in the form and the journal memsync writes them in.

// The prefixes of memsync's own uuids: only the records they name may
// carry them (CheckOwner).
const (
	PromotionPrefix     = "mem_promo_"
	ConsolidationPrefix = "mem_consol_"
)

// PromotionUUID is the uuid of the promotion of memory original: the same
// for every process that derives it, so the promotion happens once.
func PromotionUUID(original string) string {
	sum := sha256.Sum256([]byte("promotion\x00" + original))
	return PromotionPrefix + hex.EncodeToString(sum[:10])
}

// ConsolidationUUID is the uuid of the consolidation record of action
// over key: the same for every run that derives it. The consolidation
// cycle's keys are those consolidationKey reads back from the record.
func ConsolidationUUID(action string, key ...string) string {
	sum := sha256.Sum256([]byte("consolidation\x00" + action + "\x00" + strings.Join(key, "\x00")))
	return ConsolidationPrefix + hex.EncodeToString(sum[:10])
}

// PromotionOriginal returns the memory r promotes when r is a promotion
// in the form memsync writes (kind promotion, one link, the uuid
// PromotionUUID of that link); ok is false for anything else.
func PromotionOriginal(r *Record) (original string, ok bool) {
	if r.Kind != KindPromotion || len(r.Links) != 1 || r.UUID != PromotionUUID(r.Links[0]) {
		return "", false
	}
	return r.Links[0], true
}

// checkOwnRecord reports why r, read from owner's journal, cannot be one
// of memsync's own records there (nil when it may be projected):
//
//   - a promotion must be PromotionUUID of its one link, and that link
//     must not name another agent (UUIDOwner): memsync journals a
//     promotion in the original author's journal. An original whose uuid
//     names no agent cannot be judged from the line alone; its promotion
//     is accepted in any journal.
//   - a mem_promo_ uuid is only a promotion's;
//   - a mem_consol_ uuid is only on a record with the consolidation field
//     whose uuid is the one the cycle derives for owner
//     (ConsolidationUUID of consolidationKey), and whose target, for the
//     actions over one memory of the agent, does not name another agent.
func checkOwnRecord(r *Record, owner string) *FieldError {
	switch {
	case r.Kind == KindPromotion:
		original, ok := PromotionOriginal(r)
		if !ok {
			return fieldErr("uuid", "%s: a promotion is memsync's own record: its uuid must be %s<hash> of its one link (memsync's promotion uuid)", r.UUID, PromotionPrefix)
		}
		if author, ok := UUIDOwner(original); ok && author != owner {
			return fieldErr("uuid", "%s promotes %s, a memory of agent %s: only memsync writes it, in %s's journal", r.UUID, original, author, author)
		}
	case strings.HasPrefix(r.UUID, PromotionPrefix):
		return fieldErr("uuid", "%s is a promotion uuid: only memsync's promotion records carry it, not a %s record", r.UUID, r.Kind)
	case strings.HasPrefix(r.UUID, ConsolidationPrefix):
		action := r.Consolidation()
		if action == "" {
			return fieldErr("uuid", "%s is a consolidation uuid: only memsync's consolidation records (with the %q field) carry it", r.UUID, FieldConsolidation)
		}
		key, target, ok := consolidationKey(r, owner)
		if !ok || r.UUID != ConsolidationUUID(action, key...) {
			return fieldErr("uuid", "%s is not the uuid memsync's consolidation of %s derives for this %s record", r.UUID, owner, action)
		}
		if author, ok := UUIDOwner(target); target != "" && ok && author != owner {
			return fieldErr("uuid", "%s acts on %s, a memory of agent %s: only %s's consolidation writes it", r.UUID, target, author, author)
		}
	}
	return nil
}

// consolidationKey is the key the consolidation cycle of agent gives
// ConsolidationUUID for r (see memsync/consolidate), read back from the
// record, and the one memory of agent the action is about ("" when the
// action is over a topic or a group). ok is false for a consolidation
// field the cycle never writes, or the wrong number of links for it.
func consolidationKey(r *Record, agent string) (key []string, target string, ok bool) {
	switch r.Consolidation() {
	case ConsolidationTheme:
		return append([]string{agent, r.extraString("topic")}, r.Links...), "", true
	case ConsolidationPrune:
		return append([]string{agent, r.extraString("reason")}, r.Links...), "", true
	case ConsolidationCore, ConsolidationFollowUp:
		if len(r.Links) != 1 {
			return nil, "", false
		}
		return r.Links, r.Links[0], true
	case ConsolidationVerify:
		if len(r.Links) != 2 {
			return nil, "", false
		}
		return r.Links, r.Links[0], true
	}
	return nil, "", false
}
