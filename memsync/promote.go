package memsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/score"
)

// PromotionUUID is the uuid of the promotion of memory original: the same
// for every process that derives it, so the promotion happens once
// (journal.PromotionUUID, where the rule that only memsync writes it
// lives).
func PromotionUUID(original string) string { return journal.PromotionUUID(original) }

// PromotionRecord is the promotion of private memory n that became
// promotable at at (score.PromotedAt): a shared record by the same agent,
// with its text, linking to it. Its content is a function of n and at.
func PromotionRecord(n *Node, at time.Time) journal.Record {
	return journal.Record{
		UUID: PromotionUUID(n.UUID), TS: at.UTC(), Agent: n.Agent, Kind: journal.KindPromotion,
		Scope: journal.ScopeShared, Text: n.Text, Links: []string{n.UUID},
		Source: &journal.Source{Type: "inferred", Actor: "memsync", Context: "promoted from " + n.UUID},
		Tags:   n.Tags, Entities: n.Entities,
	}
}

// Promoter journals the promotion of private memories that earned it
// (SPEC §7). It is told which memories' signals may have changed; each
// promotion is appended to the original author's journal once (its uuid is
// deterministic and Append checks under the file's lock), and reaches the
// graph, shared, through the ordinary projection.
type Promoter struct {
	Graph  Graph
	Layout Layout
	Logger *zap.Logger
	Now    func() time.Time
	NoSync bool
}

// promoteChunk bounds the uuids one round of Check reads at once (a
// daemon catching up may touch millions in a pass).
const promoteChunk = 1000

// Check evaluates the private memories among uuids and journals the
// promotions due. It returns the uuids of the promotions it wrote.
func (p *Promoter) Check(ctx context.Context, uuids []string) ([]string, error) {
	var wrote []string
	for len(uuids) > 0 {
		chunk := uuids[:min(promoteChunk, len(uuids))]
		uuids = uuids[len(chunk):]
		w, err := p.check(ctx, chunk)
		wrote = append(wrote, w...)
		if err != nil {
			return wrote, err
		}
	}
	return wrote, nil
}

func (p *Promoter) check(ctx context.Context, uuids []string) ([]string, error) {
	lg := p.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	nodes, err := p.Graph.Get(ctx, uuids)
	if err != nil {
		return nil, fmt.Errorf("promotion: %w", err)
	}
	var private []Node
	var promos []string
	for _, n := range nodes {
		if n.Scope == journal.ScopePrivate && n.Kind != journal.KindPromotion {
			private = append(private, n)
			promos = append(promos, PromotionUUID(n.UUID))
		}
	}
	if len(private) == 0 {
		return nil, nil
	}
	done, err := p.Graph.Get(ctx, promos)
	if err != nil {
		return nil, fmt.Errorf("promotion: %w", err)
	}
	ids := make([]string, len(private))
	for i, n := range private {
		ids[i] = n.UUID
	}
	refs, err := p.Graph.Incoming(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("promotion: %w", err)
	}
	events := map[string][]score.Event{}
	for _, r := range refs {
		events[r.Target] = append(events[r.Target], score.EventFrom(score.Relation(r.Relation), &r.Source.Record))
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	slices.SortFunc(private, func(a, b Node) int { return strings.Compare(a.UUID, b.UUID) })
	var wrote []string
	for i := range private {
		n := &private[i]
		if _, ok := done[PromotionUUID(n.UUID)]; ok {
			continue
		}
		m := score.FromRecord(&n.Record, n.InvalidAt, n.ReplacedBy)
		at, ok := score.PromotedAt(m, events[n.UUID], now())
		if !ok {
			continue
		}
		rec := PromotionRecord(n, at)
		_, err := journal.Append(p.Layout.JournalDir(n.Agent), &rec, journal.AppendOptions{NoSync: p.NoSync, IfAbsent: true, Root: p.Layout.Root})
		if errors.Is(err, journal.ErrExists) {
			continue
		}
		if err != nil {
			return wrote, fmt.Errorf("promotion of %s: %w", n.UUID, err)
		}
		lg.Info("promoted a private memory", zap.String("uuid", n.UUID), zap.String("promotion", rec.UUID), zap.String("agent", n.Agent))
		wrote = append(wrote, rec.UUID)
	}
	return wrote, nil
}
