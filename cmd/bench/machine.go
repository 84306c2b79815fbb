package main

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// machine describes where the benchmark ran.
type machine struct {
	cpus     int
	memory   string
	cpuModel string
	kernel   string
	goVer    string
	loadAvg  string
	source   string // the memsync code measured
	date     time.Time
}

func describeMachine(now time.Time) machine {
	m := machine{cpus: runtime.NumCPU(), goVer: runtime.Version(), date: now.UTC(), cpuModel: "unknown", memory: "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpuModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && k == "MemTotal" {
				kib, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				m.memory = fmt.Sprintf("%.1f GiB", kib/1024/1024)
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = "Linux " + strings.TrimSpace(string(b))
	} else {
		m.kernel = runtime.GOOS
	}
	m.loadAvg = loadAverage()
	m.source = sourceVersion()
	return m
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// selfCPU is the CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverPID finds the process listening on the TCP port of the Bolt URI on
// this host (the Neo4j server), or 0. It only reads /proc.
func serverPID(uri string) int {
	u, err := url.Parse(uri)
	if err != nil {
		return 0
	}
	port, err := strconv.ParseUint(u.Port(), 10, 16)
	if u.Port() == "" {
		port, err = 7687, nil
	}
	if err != nil {
		return 0
	}
	inodes := listeningInodes(uint16(port))
	if len(inodes) == 0 {
		return 0
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		fds, _ := filepath.Glob(filepath.Join(d, "fd", "*"))
		for _, fd := range fds {
			link, err := os.Readlink(fd)
			if err == nil && inodes[link] {
				pid, _ := strconv.Atoi(filepath.Base(d))
				return pid
			}
		}
	}
	return 0
}

// listeningInodes are the sockets listening on port, as "socket:[inode]".
func listeningInodes(port uint16) map[string]bool {
	out := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(f[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil && uint16(p) == port {
				out["socket:["+f[9]+"]"] = true
			}
		}
	}
	return out
}

// procCPU is the CPU time process pid has used (utime + stime), or 0.
func procCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const clockTicks = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / clockTicks
}

// timeSince is the seconds since t.
func timeSince(t time.Time) float64 { return time.Since(t).Seconds() }

// sourceVersion names the code measured: the HEAD commit, and the paths
// with uncommitted changes (other than the benchmark's own), if any.
func sourceVersion() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown (not a git work tree)"
	}
	v := "commit " + strings.TrimSpace(string(out))
	st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		return v
	}
	var dirty []string
	for _, line := range strings.Split(string(st), "\n") {
		if len(line) < 4 {
			continue
		}
		path := line[3:] // "XY path"
		if strings.HasPrefix(path, "cmd/bench/") || strings.HasPrefix(path, "docs/") {
			continue
		}
		dirty = append(dirty, path)
	}
	if len(dirty) > 0 {
		v += " with uncommitted changes to " + strings.Join(dirty, ", ")
	}
	return v
}
