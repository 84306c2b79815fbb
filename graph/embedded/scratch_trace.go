package embedded

import (
	"fmt"
	"os"
	"time"
)

var scratchT0 = time.Now()

func strace(format string, a ...any) {
	if os.Getenv("SCRATCH_TRACE") == "" {
		return
	}
	fmt.Fprintf(os.Stderr, "%8.1fms "+format+"\n", append([]any{float64(time.Since(scratchT0).Microseconds()) / 1000}, a...)...)
}
