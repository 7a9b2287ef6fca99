package observe

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// WriteTextfile adds this process's counters to those already in path and
// writes the sum there atomically (a temporary file in the same directory,
// synced, then renamed over path), for node_exporter's textfile collector
// (--collector.textfile.directory; name the file *.prom). Counters thus
// keep growing across the CLI's runs on one machine, as Prometheus expects
// of a counter; a run that cannot read the old file starts from zero (a
// counter reset, which rate() handles). Gauges are this run's, and
// ghonce_last_run_timestamp_seconds is set to now. Concurrent runs are
// serialised by a lock on path+".lock" where the system has one.
func (m *Metrics) WriteTextfile(path string, now time.Time) error {
	if m == nil {
		return nil
	}
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return fmt.Errorf("write metrics textfile: %w", err)
	}
	defer unlock()
	samples := m.Snapshot()
	if old, err := readCounters(path); err == nil {
		for k, v := range old {
			samples[k] += v
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write metrics textfile: %w", err)
	}
	samples[LastRunTimestamp] = float64(now.UnixMilli()) / 1000
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write metrics textfile: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	if err := writeText(tmp, samples); err != nil {
		tmp.Close()
		return fmt.Errorf("write metrics textfile: %w", err)
	}
	// The collector reads files with mode 0644; CreateTemp makes 0600.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write metrics textfile: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write metrics textfile: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write metrics textfile: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write metrics textfile: %w", err)
	}
	return nil
}

// readCounters reads the counter and histogram samples of ghonce's families
// from a textfile an earlier run wrote; gauges are left out.
func readCounters(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		name, val := line[:i], line[i+1:]
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			continue
		}
		base, _, _ := strings.Cut(name, "{")
		if cumulative(base) {
			out[name] = v
		}
	}
	return out, sc.Err()
}

// cumulative reports whether a sample's name is a counter's or a
// histogram's: those add up across runs.
func cumulative(base string) bool {
	for _, f := range families {
		switch f.typ {
		case counterType:
			if base == f.name {
				return true
			}
		case histogramType:
			if base == f.name+"_bucket" || base == f.name+"_sum" || base == f.name+"_count" {
				return true
			}
		}
	}
	return false
}
