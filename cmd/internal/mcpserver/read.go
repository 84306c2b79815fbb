package mcpserver

import (
	"context"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/packet"
	"github.com/memsync/memsync/memsync/read"
)

// recall is ranked search through the server's read path (read.Rank at
// now), as the search command ranks; isOffline and reason say whether the
// journals answered, and why.
func (b *server) recall(ctx context.Context, q memsync.SearchQuery) (hits []memsync.Ranked, isOffline bool, reason string, err error) {
	rq := memsync.RankQuery{SearchQuery: q, Clock: memsync.Present(b.d.Now())}
	r := b.d.Open(ctx)
	defer r.Close()
	hits, err = read.RankFrom(ctx, r, rq)
	return hits, r.Offline, r.Reason, err
}

// packet builds req's packet through the server's read path, as the
// packet command builds it: the graph, else the journals (Offline set,
// with the reason), with the same privacy.
func (b *server) packet(ctx context.Context, req packet.Request) (packet.Packet, error) {
	r := b.d.Open(ctx)
	defer r.Close()
	return packet.FromReader(ctx, r, req)
}

// findMemory looks uuid up through the server's read path (read.Find).
func (b *server) findMemory(ctx context.Context, uuid string) (memsync.Node, bool, error) {
	r := b.d.Open(ctx)
	defer r.Close()
	return read.Find(ctx, r, uuid)
}
