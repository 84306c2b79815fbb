package neo4j

import "time"

// The background drop waits dropGrace after a switch; tests that wait for
// it shorten it.
func init() { dropGrace = 2 * time.Second }
