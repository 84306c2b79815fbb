package hooks

import (
	"context"
	"strings"
	"time"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/packet"
	"github.com/memsync/memsync/memsync/read"
)

// buildPacket builds req's packet through t's read path, as the packet
// command builds it: the graph, else the journals (Offline set, with the
// reason), with the same privacy.
func buildPacket(ctx context.Context, t Target, req packet.Request) (packet.Packet, error) {
	r := t.Open(ctx)
	defer r.Close()
	return packet.FromReader(ctx, r, req)
}

// recall is ranked search through t's read path (read.Rank at now), as
// the search command ranks.
func recall(ctx context.Context, t Target, q memsync.SearchQuery, now time.Time) ([]memsync.Ranked, error) {
	rq := memsync.RankQuery{SearchQuery: q, Clock: memsync.Present(now)}
	r := t.Open(ctx)
	defer r.Close()
	return read.RankFrom(ctx, r, rq)
}

// oneLineErr is err's message on one line.
func oneLineErr(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
