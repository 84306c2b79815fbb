//go:build !linux

package embedded

import "time"

func threadCPU() time.Duration  { return 0 }
func processCPU() time.Duration { return 0 }
