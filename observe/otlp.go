package observe

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Tracer records spans and exports them with OTLP over HTTP to an
// OpenTelemetry collector, in batches. A nil *Tracer is tracing off.
type Tracer struct {
	host        HostTracer // NewHostTracer: the host program records the spans
	now         func() time.Time
	parentBased bool
	ratio       float64

	endpoint string
	headers  http.Header
	client   *http.Client
	resource []Attr
	scope    string
	version  string
	logf     func(format string, args ...any)

	batchSize, maxQueue int
	delay               time.Duration

	mu      sync.Mutex
	buf     []*Span
	dropped int
	failed  bool // an export failed and was reported; the next success says so
	wake    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

// TracerOptions are what the environment does not say.
type TracerOptions struct {
	// Version is the service.version resource attribute.
	Version string
	// Logf reports exports that fail (once per outage) and settings
	// ghonce ignores; nil is silent. Header values are never reported.
	Logf func(format string, args ...any)
	// HTTPClient sends the exports (default: a client with the OTLP
	// timeout).
	HTTPClient *http.Client
}

// TracerFromEnv returns a Tracer configured by the standard OpenTelemetry
// variables, read through getenv, or nil (tracing off) when none asks for
// traces: OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off;
// otherwise it is on when OTEL_TRACES_EXPORTER=otlp or an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is
// set. Also read: OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL (http/protobuf, the
// default; http/json is taken and sent as protobuf, which every receiver accepts; grpc is refused), _HEADERS, _TIMEOUT,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER[_ARG],
// OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_EXPORT_BATCH_SIZE and
// OTEL_BSP_MAX_QUEUE_SIZE. The error says which variable is wrong.
func TracerFromEnv(getenv func(string) string, o TracerOptions) (*Tracer, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	// The signal-specific variable wins over the general one.
	either := func(signal, general string) string {
		if v := get(signal); v != "" {
			return v
		}
		return get(general)
	}
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	exp := strings.ToLower(get("OTEL_TRACES_EXPORTER"))
	general, signal := get("OTEL_EXPORTER_OTLP_ENDPOINT"), get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	switch {
	case exp == "none":
		return nil, nil
	case exp == "" && general == "" && signal == "":
		return nil, nil
	case exp != "" && exp != "otlp":
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: ghonce exports traces with OTLP only: set otlp (or none), and send them on from an OpenTelemetry collector", exp)
	}
	t := &Tracer{now: time.Now, parentBased: true, ratio: 1, headers: http.Header{}, scope: "github.com/ghonce/ghonce",
		version: o.Version, logf: o.Logf, batchSize: 512, maxQueue: 2048, delay: 5 * time.Second,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	if t.logf == nil {
		t.logf = func(string, ...any) {}
	}
	switch {
	case signal != "":
		t.endpoint = signal // used as it is
	case general != "":
		t.endpoint = strings.TrimRight(general, "/") + "/v1/traces"
	default:
		t.endpoint = "http://localhost:4318/v1/traces"
	}
	if u, err := url.Parse(t.endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid OTLP traces endpoint %q (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): want http(s)://HOST:PORT, e.g. http://localhost:4318", redact(t.endpoint))
	}
	switch p := either("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"); p {
	case "", "http/protobuf":
	case "http/json":
		// One encoding path: every OTLP/HTTP receiver takes protobuf.
		t.logf("OTEL_EXPORTER_OTLP_PROTOCOL=http/json: ghonce sends http/protobuf, which every OTLP/HTTP receiver accepts")
	case "grpc":
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=grpc: ghonce sends OTLP over HTTP only: set http/protobuf and the collector's HTTP port (4318)")
	default:
		return nil, fmt.Errorf("invalid OTEL_EXPORTER_OTLP_PROTOCOL %q: want http/protobuf or http/json", p)
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		if err := parsePairs(get(k), func(name, value string) { t.headers.Set(name, value) }); err != nil {
			return nil, fmt.Errorf("invalid %s: %w: want name=value pairs separated by commas", k, err)
		}
	}
	timeout := 10 * time.Second
	if v := either("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("invalid OTEL_EXPORTER_OTLP_TIMEOUT %q: want milliseconds, e.g. 10000", v)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	t.client = o.HTTPClient
	if t.client == nil {
		t.client = &http.Client{Timeout: timeout}
	}
	for _, v := range []struct {
		name string
		to   *int
	}{{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", &t.batchSize}, {"OTEL_BSP_MAX_QUEUE_SIZE", &t.maxQueue}} {
		if s := get(v.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("invalid %s %q: want a positive number", v.name, s)
			}
			*v.to = n
		}
	}
	if s := get("OTEL_BSP_SCHEDULE_DELAY"); s != "" {
		ms, err := strconv.Atoi(s)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("invalid OTEL_BSP_SCHEDULE_DELAY %q: want milliseconds, e.g. 5000", s)
		}
		t.delay = time.Duration(ms) * time.Millisecond
	}
	if err := t.sampler(get("OTEL_TRACES_SAMPLER"), get("OTEL_TRACES_SAMPLER_ARG")); err != nil {
		return nil, err
	}
	service := "ghonce"
	var res []Attr
	if err := parsePairs(get("OTEL_RESOURCE_ATTRIBUTES"), func(k, v string) {
		if k == "service.name" {
			service = v
			return
		}
		res = append(res, String(k, v))
	}); err != nil {
		return nil, fmt.Errorf("invalid OTEL_RESOURCE_ATTRIBUTES: %w: want key=value pairs separated by commas", err)
	}
	if s := get("OTEL_SERVICE_NAME"); s != "" {
		service = s
	}
	t.resource = append([]Attr{String("service.name", service)}, res...)
	if o.Version != "" {
		t.resource = append(t.resource, String("service.version", o.Version))
	}
	go t.loop()
	return t, nil
}

// sampler reads OTEL_TRACES_SAMPLER and its argument.
func (t *Tracer) sampler(name, arg string) error {
	ratio := func() error {
		if arg == "" {
			return nil
		}
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || f < 0 || f > 1 {
			return fmt.Errorf("invalid OTEL_TRACES_SAMPLER_ARG %q: want a ratio from 0 to 1", arg)
		}
		t.ratio = f
		return nil
	}
	switch name {
	case "", "parentbased_always_on":
	case "always_on":
		t.parentBased = false
	case "always_off":
		t.parentBased, t.ratio = false, 0
	case "parentbased_always_off":
		t.ratio = 0
	case "traceidratio":
		t.parentBased = false
		return ratio()
	case "parentbased_traceidratio":
		return ratio()
	default:
		return fmt.Errorf("invalid OTEL_TRACES_SAMPLER %q: ghonce knows always_on, always_off, traceidratio and their parentbased_ forms", name)
	}
	return nil
}

// parsePairs reads the W3C Baggage-like k=v,k=v lists of OTEL_*_HEADERS
// and OTEL_RESOURCE_ATTRIBUTES (values percent-decoded). An error never
// quotes a value: headers carry API keys.
func parsePairs(s string, put func(k, v string)) error {
	if s == "" {
		return nil
	}
	for i, p := range strings.Split(s, ",") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("pair %d has no name=", i+1)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("the value of %s is not percent-encoded correctly", k)
		}
		put(k, dv)
	}
	return nil
}

// redact drops a URL's user information (a password) for a message.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = url.User("REDACTED")
	return u.String()
}

func (t *Tracer) queue(s *Span) {
	t.mu.Lock()
	if len(t.buf) >= t.maxQueue {
		t.dropped++
		t.mu.Unlock()
		return
	}
	t.buf = append(t.buf, s)
	full := len(t.buf) >= t.batchSize
	t.mu.Unlock()
	if full {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// loop exports a batch every delay, or as soon as one is full.
func (t *Tracer) loop() {
	defer close(t.stopped)
	tick := time.NewTicker(max(t.delay, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		case <-t.wake:
		}
		t.flush(context.Background())
	}
}

// flush exports everything queued, batch by batch.
func (t *Tracer) flush(ctx context.Context) {
	for {
		t.mu.Lock()
		n := min(len(t.buf), t.batchSize)
		batch := t.buf[:n:n]
		t.buf = t.buf[n:]
		dropped := t.dropped
		t.dropped = 0
		t.mu.Unlock()
		if dropped > 0 {
			t.logf("dropped %d spans: the export queue (OTEL_BSP_MAX_QUEUE_SIZE) was full", dropped)
		}
		if n == 0 {
			return
		}
		t.export(ctx, batch)
	}
}

// export sends one batch. A failure is reported once, until an export
// succeeds again; spans are never retried (the next batch may succeed).
func (t *Tracer) export(ctx context.Context, batch []*Span) {
	body, ctype := t.encodeProto(batch), "application/x-protobuf"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint, bytes.NewReader(body))
	if err == nil {
		req.Header = t.headers.Clone()
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("User-Agent", "ghonce/"+t.version)
		var resp *http.Response
		if resp, err = t.client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				err = fmt.Errorf("the collector answered %s", resp.Status)
			}
		}
	}
	t.mu.Lock()
	was := t.failed
	t.failed = err != nil
	t.mu.Unlock()
	switch {
	case err != nil && !was:
		t.logf("could not export %d spans to %s: %v (traces are lost until the collector answers; ghonce's work goes on)", len(batch), redact(t.endpoint), scrub(err))
	case err == nil && was:
		t.logf("exporting spans to %s again", redact(t.endpoint))
	}
}

// scrub keeps an error's text free of the endpoint's user information.
func scrub(err error) string {
	var ue *url.Error
	if e, ok := err.(*url.Error); ok {
		ue = e
		return ue.Op + " " + redact(ue.URL) + ": " + ue.Err.Error()
	}
	return err.Error()
}

// Shutdown exports what is queued and stops the exporter; spans ended
// later are dropped. It returns when done or when ctx ends.
func (t *Tracer) Shutdown(ctx context.Context) {
	if t == nil || t.host != nil {
		return
	}
	t.once.Do(func() {
		close(t.stop)
		<-t.stopped
		t.flush(ctx)
	})
}

// ForceFlush exports what is queued now.
func (t *Tracer) ForceFlush(ctx context.Context) {
	if t != nil && t.host == nil {
		t.flush(ctx)
	}
}
