//go:build !linux

package offline

import "time"

func processCPU() time.Duration { return 0 }
