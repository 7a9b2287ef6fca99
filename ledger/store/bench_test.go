package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/ledgertest"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
	"github.com/ghonce/ghonce/ledger/store"
)

// BenchmarkConcurrentClaimFinish runs claim + finish of fresh keys from 1,
// 8 and 32 workers at once, on SQLite and on Postgres in the same run. Each
// worker opens the ledger itself, as a separate ghonce process would (its
// own SQLite connection, its own Postgres connection). It reports
// throughput (ops/s) and each op's latency (p50, p99, in ms). Postgres is
// benchmarked when GHONCE_TEST_POSTGRES is set.
func BenchmarkConcurrentClaimFinish(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, workers := range []int{1, 8, 32} {
			b.Run(fmt.Sprintf("backend=%s/workers=%d", backend, workers), func(b *testing.B) {
				var loc string
				if backend == "sqlite" {
					loc = filepath.Join(b.TempDir(), "ledger.db")
				} else {
					loc = pgtest.Schema(b)
				}
				benchConcurrent(b, loc, workers)
			})
		}
	}
}

func benchConcurrent(b *testing.B, loc string, workers int) {
	ctx := context.Background()
	ls := make([]ledger.Ledger, workers)
	for i := range ls {
		o, err := store.Open(ctx, loc, store.Options{Create: store.CreateForAction})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { o.Close() })
		ls[i] = o
	}
	var (
		next atomic.Int64
		mu   sync.Mutex
		lat  = make([]time.Duration, 0, b.N)
		wg   sync.WaitGroup
	)
	b.ResetTimer()
	start := time.Now()
	for w, l := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					break
				}
				p := ledgertest.BenchClaim(fmt.Sprintf("key-%d", i))
				p.Owner = ledger.Owner{ID: fmt.Sprintf("worker-%d", w), Host: "bench", PID: w + 1}
				t0 := time.Now()
				if err := ledgertest.BenchAction(ctx, l, p, false); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "ops/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op") // ops/s says it; ns/op of a concurrent loop misleads
}
