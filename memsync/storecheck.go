package memsync

import "errors"

// ErrStoreLost means the graph's storage was removed or replaced under a
// running engine (`rm -rf .memsync`): writes would go to files nobody else
// can see. Run returns it so that its owner opens the graph again, which
// then projects the journals again (an empty graph behind cursors that say
// otherwise is re-projected).
var ErrStoreLost = errors.New("graph store lost")

// StoreChecker is a Graph whose storage can vanish without its open
// connections noticing, as a local database file can. CheckStore returns an
// error wrapping ErrStoreLost when the storage it opened is no longer where
// it was.
type StoreChecker interface {
	CheckStore() error
}

// checkStore is nil, or the error of a graph whose store was lost.
func (e *Engine) checkStore() error {
	if c, ok := e.opts.Graph.(StoreChecker); ok {
		return c.CheckStore()
	}
	return nil
}
