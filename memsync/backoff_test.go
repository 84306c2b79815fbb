package memsync_test

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

type backoffT = backoff.BackOff

// fastBackOff retries quickly so tests of an unreachable graph stay short.
func fastBackOff() backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 5 * time.Millisecond
	b.MaxInterval = 50 * time.Millisecond
	b.MaxElapsedTime = 0
	b.Reset()
	return b
}
