package read

import (
	"context"
	"fmt"
	"slices"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/score"
)

// Retirement reasons FollowOriginal gives (in the basis a promotion's
// explain prints). They name no uuid: the original is private to its
// author, and whatever retired it may be too.
const (
	RetiredSuperseded = "retired with its original (superseded)"
	RetiredWrong      = "retired with its original (flagged wrong)"
	RetiredArchived   = "archived with its original"
)

// FollowOriginal is the status rule of a promotion (SPEC §7, issue 25 §4):
// a promotion stands only while its original does. Given the promotion's
// own result and its original's, at the same clock, it returns the
// promotion's: superseded when the original is superseded (naming no
// replacement), archived and flagged wrong, at importance 0, when the
// original is flagged wrong, archived when the original is archived, and
// its own result otherwise. Every reader applies it: ScoreNodes (search,
// packets, explain, MCP, offline) and the snapshots.
func FollowOriginal(promo, original score.Result) score.Result {
	note := ""
	switch {
	case original.Status == score.Superseded:
		promo.Status, note = score.Superseded, RetiredSuperseded
	case original.FlaggedWrong:
		promo.Status, promo.FlaggedWrong, promo.Importance, note = score.Archived, true, 0, RetiredWrong
	case original.Status == score.Archived:
		promo.Status, note = score.Archived, RetiredArchived
	default:
		return promo
	}
	promo.Basis = append(slices.Clip(promo.Basis), note)
	promo.StatusWhy = note
	return promo
}

// followOriginals applies FollowOriginal to every promotion in scored
// (the form memsync writes, journal.PromotionOriginal): its original is
// read from r and evaluated at the clock from its own signals, the same way
// ScoreNodes evaluates any memory (one level: an original is never
// followed further). A promotion whose original is not there keeps its
// own result.
func followOriginals(ctx context.Context, r memsync.SignalReader, scored map[string]memsync.Scored, groups []string, clock memsync.Clock) error {
	promos := map[string][]string{} // original -> its promotions among scored
	var ids []string
	for id, s := range scored {
		orig, ok := journal.PromotionOriginal(&s.Record)
		if !ok {
			continue
		}
		if _, seen := promos[orig]; !seen {
			ids = append(ids, orig)
		}
		promos[orig] = append(promos[orig], id)
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	got, err := r.Get(ctx, ids)
	if err != nil {
		return fmt.Errorf("read the originals of %d promotions: %w", len(ids), err)
	}
	originals := make([]memsync.Node, 0, len(got))
	for _, id := range ids {
		if n, ok := got[id]; ok {
			originals = append(originals, n)
		}
	}
	evaluated, err := scoreNodes(ctx, r, originals, groups, clock)
	if err != nil {
		return fmt.Errorf("evaluate the originals of %d promotions: %w", len(ids), err)
	}
	for orig, o := range evaluated {
		for _, id := range promos[orig] {
			s := scored[id]
			s.Result = FollowOriginal(s.Result, o.Result)
			scored[id] = s
		}
	}
	return nil
}
