package read

import (
	"context"
	"slices"
	"time"

	"github.com/memsync/memsync/memsync"
)

// historyMaxPoints bounds the instants History evaluates: a memory named
// by thousands of records is drawn from its latest events.
const historyMaxPoints = 60

// History is how memory uuid's importance and confidence moved up to the
// clock, for a reader of groups: the memory evaluated (ScoreNodes, the
// rule explain applies) as of its own ts, as of each event explain shows
// the reader with a time (an event whose record the reader may not see
// gives no instant away), and at the clock. The memory itself is returned
// as Explain returns it; a memory the reader may not see is ErrNotVisible.
func History(ctx context.Context, r memsync.SignalReader, uuid string, groups []string, clock memsync.Clock) (memsync.Scored, []memsync.HistoryPoint, error) {
	s, err := Explain(ctx, r, uuid, groups, clock)
	if err != nil {
		return memsync.Scored{}, nil, err
	}
	type instant struct {
		at   time.Time
		kind string
	}
	instants := []instant{{s.TS, "written"}}
	for _, e := range s.Result.Effects {
		if _, ts := e.Named(); !ts.IsZero() && !ts.Before(s.TS) && ts.Before(clock.At) {
			instants = append(instants, instant{ts, string(e.Kind)})
		}
	}
	slices.SortStableFunc(instants, func(a, b instant) int { return a.at.Compare(b.at) })
	instants = slices.CompactFunc(instants, func(a, b instant) bool { return a.at.Equal(b.at) })
	if len(instants) > historyMaxPoints {
		instants = append(instants[:1], instants[len(instants)-historyMaxPoints+1:]...)
	}
	points := make([]memsync.HistoryPoint, 0, len(instants)+1)
	for _, in := range instants {
		at, err := ScoreNodes(ctx, r, []memsync.Node{s.Node}, groups, memsync.AsOf(in.at))
		if err != nil {
			return memsync.Scored{}, nil, err
		}
		res := at[uuid].Result
		points = append(points, memsync.HistoryPoint{At: in.at, Importance: res.Importance, Confidence: res.Confidence, Status: res.Status, Kind: in.kind})
	}
	points = append(points, memsync.HistoryPoint{At: clock.At, Importance: s.Result.Importance, Confidence: s.Result.Confidence, Status: s.Result.Status, Kind: "now"})
	return s, points, nil
}
