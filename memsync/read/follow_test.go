package read_test

import (
	"slices"
	"testing"

	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/score"
)

// TestFollowOriginal: a promotion stands only while its original does
// (issue 25 §4); otherwise it keeps its own result.
func TestFollowOriginal(t *testing.T) {
	own := score.Result{Importance: 0.8, Status: score.Active, Basis: []string{"inferred"}}
	for _, tc := range []struct {
		name     string
		original score.Result
		status   score.Status
		wrong    bool
		imp      float64
		note     string
	}{
		{"active original", score.Result{Status: score.Active}, score.Active, false, 0.8, ""},
		{"original for review", score.Result{Status: score.Review}, score.Active, false, 0.8, ""},
		{"superseded original", score.Result{Status: score.Superseded}, score.Superseded, false, 0.8, read.RetiredSuperseded},
		{"original flagged wrong", score.Result{Status: score.Archived, FlaggedWrong: true}, score.Archived, true, 0, read.RetiredWrong},
		{"archived original", score.Result{Status: score.Archived}, score.Archived, false, 0.8, read.RetiredArchived},
		{"superseded and flagged wrong", score.Result{Status: score.Superseded, FlaggedWrong: true}, score.Superseded, false, 0.8, read.RetiredSuperseded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := read.FollowOriginal(own, tc.original)
			if got.Status != tc.status || got.FlaggedWrong != tc.wrong || got.Importance != tc.imp {
				t.Fatalf("FollowOriginal = %+v, want status %s, wrong %v, importance %v", got, tc.status, tc.wrong, tc.imp)
			}
			if hasNote := slices.Contains(got.Basis, tc.note); tc.note != "" && !hasNote || tc.note == "" && len(got.Basis) != 1 {
				t.Fatalf("basis %q, want note %q", got.Basis, tc.note)
			}
			if len(own.Basis) != 1 {
				t.Fatal("FollowOriginal changed its argument's basis")
			}
		})
	}
}
