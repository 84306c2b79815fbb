package read

import (
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

// followOriginals is scored's results for nodes, each promotion among them
// under FollowOriginal with its original's result in scored (evaluated
// from its own signals at the same clock, as ScoreNodes evaluates any
// memory; one level: an original is never followed further). scored holds
// the originals that withOriginals added; they are left out unless nodes
// asked for them. A promotion whose original is not in scored keeps its
// own result.
func followOriginals(nodes []memsync.Node, scored map[string]memsync.Scored) map[string]memsync.Scored {
	out := make(map[string]memsync.Scored, len(nodes))
	for _, n := range nodes {
		s := scored[n.UUID]
		if orig, ok := journal.PromotionOriginal(&s.Record); ok {
			if o, ok := scored[orig]; ok {
				s.Result = FollowOriginal(s.Result, o.Result)
			}
		}
		out[n.UUID] = s
	}
	return out
}
