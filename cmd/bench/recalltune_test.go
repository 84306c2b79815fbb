package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/memsync"

	"github.com/memsync/memsync/memsync/offline"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/recall"
)

// TestRecallSweep is the cross-validation sweep of the rule's tunable
// weights (recall.DateBoost, recall.DateSlack) over the LoCoMo dev
// conversations, offline and in process: for each held-out conversation,
// the setting best on the other four, and its recall@10 on the one held
// out. It runs only with MEMSYNC_RECALL_SWEEP=1 (and the data set beside
// the repository); --recall-sessions=false's records with
// MEMSYNC_RECALL_SWEEP_SESSIONS=0.
func TestRecallSweep(t *testing.T) {
	if os.Getenv("MEMSYNC_RECALL_SWEEP") != "1" {
		t.Skip("MEMSYNC_RECALL_SWEEP=1 runs the sweep")
	}
	sessions := os.Getenv("MEMSYNC_RECALL_SWEEP_SESSIONS") != "0"
	cases, err := loadLocomo("../../../shared/eval/locomo-dev/locomo-dev.json", 0, sessions)
	if err != nil {
		cases, err = loadLocomo("/work/shared/eval/locomo-dev/locomo-dev.json", 0, sessions)
	}
	if err != nil {
		t.Skip(err)
	}
	roots := make([]string, len(cases))
	for i, rc := range cases {
		roots[i] = t.TempDir()
		if err := writeRecallRepo(roots[i], rc); err != nil {
			t.Fatal(err)
		}
	}
	type setting struct {
		boost float64
		slack time.Duration
	}
	var settings []setting
	for _, b := range strings.Fields(envOr("MEMSYNC_RECALL_SWEEP_BOOSTS", "0 0.25 0.5 1 2")) {
		for _, s := range strings.Fields(envOr("MEMSYNC_RECALL_SWEEP_SLACKS", "0 3 7 14")) {
			bv, _ := strconv.ParseFloat(b, 64)
			sv, _ := strconv.Atoi(s)
			settings = append(settings, setting{bv, time.Duration(sv) * 24 * time.Hour})
		}
	}
	// r10[s][c]: recall@10 of setting s on conversation c, with its
	// question count for pooling.
	r10 := make([][]*recallScores, len(settings))
	for si, s := range settings {
		recall.DateBoost, recall.DateSlack = s.boost, s.slack
		for ci, rc := range cases {
			sc := newRecallScores()
			for _, q := range rc.questions {
				hits, err := read.Search(context.Background(), offline.Journals{Layout: memsync.Layout{Root: roots[ci]}}, recallQuery(q.text))
				if err != nil {
					t.Fatal(err)
				}
				sc.add(q, hitUUIDs(hits))
			}
			r10[si] = append(r10[si], sc)
		}
		var cells []string
		for _, sc := range r10[si] {
			cells = append(cells, fmt.Sprintf("%.3f", sc.mean(sc.r10, 0)))
		}
		t.Logf("boost %.2f slack %v: per conversation R@10 %s; pooled %.3f", s.boost, s.slack, strings.Join(cells, " "), pooled(r10[si], -1, 0))
	}
	for held := range cases {
		best := 0
		for si := range settings {
			if pooled(r10[si], held, 0) > pooled(r10[best], held, 0) {
				best = si
			}
		}
		sc := r10[best][held]
		t.Logf("fold %d (held out %s): best on the other four boost %.2f slack %v (train R@10 %.3f); held out R@10 %.3f (setting 0 there: %.3f); by category %s",
			held, cases[held].id, settings[best].boost, settings[best].slack, pooled(r10[best], held, 0), sc.mean(sc.r10, 0), r10[0][held].mean(r10[0][held].r10, 0), categories(sc))
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// pooled is the recall@10 of category c over every conversation but skip.
func pooled(s []*recallScores, skip, c int) float64 {
	sum, n := 0.0, 0
	for i, x := range s {
		if i != skip {
			sum += x.r10[c]
			n += x.n[c]
		}
	}
	return sum / float64(n)
}

func categories(s *recallScores) string {
	var out []string
	for c := 1; c <= 4; c++ {
		out = append(out, fmt.Sprintf("%s %.3f", categoryNames[c], s.mean(s.r10, c)))
	}
	return strings.Join(out, ", ")
}
