package packet

import (
	"context"
	"errors"

	"github.com/memsync/memsync/memsync"
	readpath "github.com/memsync/memsync/memsync/read"
)

// FromReader builds req's packet through r, the one read path: the graph,
// else the journals (Offline set, with the reason), with the same privacy.
// An unknown role is the caller's error and no reason to fall back. It is
// the one way the packet command, the hooks and the MCP server build one.
func FromReader(ctx context.Context, r *readpath.Reader, req Request) (Packet, error) {
	p, err := readpath.ReadUnless(ctx, r, func(s memsync.Searcher) (Packet, error) { return BuildPacket(ctx, s, req) },
		func(err error) bool { return errors.Is(err, ErrUnknownRole) })
	if err != nil {
		return Packet{}, err
	}
	p.Offline, p.OfflineReason = r.Offline, r.Reason
	return p, nil
}
