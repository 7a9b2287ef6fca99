package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// actionBuild is what the action's build step costs, measured by running
// action.yml's own "Locate ghonce" and "Build ghonce" scripts on the tree
// as `git archive` gives it (the tarball a runner downloads).
type actionBuild struct {
	cold          time.Duration   // zero: not measured
	prime         time.Duration   // without cold: the first build on this machine's caches
	warm, upgrade []time.Duration // per round
	coldNote      string          // how cold was measured, or why not
	warmNote      string          // whose caches the warm builds had
	binBytes      int64           // the binary the "Restore ghonce" cache holds
	note          string          // why nothing was measured
	took          time.Duration
}

// actionBuildTarget is issue 22's: every job after the first on a
// repository builds in at most this.
const actionBuildTarget = 10 * time.Second

// measureActionBuild runs the action's build three ways: cold (empty Go
// build and module caches, when cold is set: minutes, mostly SQLite's C),
// warm (the caches that build left, as "Restore the Go caches" restores
// them for the same commit) and after an upgrade (the same caches, the
// source at another commit: archival.txt names another, so internal/cli
// compiles again and the binary links again). The modules come from this
// machine's module cache served as a file:// GOPROXY, so the cold build
// needs no network; without cold the warm builds use this machine's own
// caches. It never fails the report.
func measureActionBuild(ctx context.Context, e *env, root string, cold bool) actionBuild {
	fmt.Fprintln(e.log, "== the action's build step (action.yml, on git archive output)")
	t0 := time.Now()
	a, err := actionBuildRun(ctx, e, root, cold)
	if err != nil {
		a.note = "not measured: " + firstLine(err.Error())
		fmt.Fprintf(e.log, "the action's build: %v\n", err)
	}
	a.took = time.Since(t0).Round(time.Second)
	return a
}

func actionBuildRun(ctx context.Context, e *env, root string, cold bool) (actionBuild, error) {
	var a actionBuild
	scripts, err := actionScripts(filepath.Join(root, "action.yml"), "where", "build")
	if err != nil {
		return a, err
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return a, err
	}
	goenv := func(k string) (string, error) {
		out, err := exec.CommandContext(ctx, goBin, "env", k).Output()
		return strings.TrimSpace(string(out)), err
	}
	dir, err := os.MkdirTemp(e.tmp, "action-")
	if err != nil {
		return a, err
	}
	src := filepath.Join(dir, "src")
	if err := gitArchive(ctx, root, src); err != nil {
		return a, err
	}
	runner := filepath.Join(dir, "runner")
	if err := os.MkdirAll(runner, 0o755); err != nil {
		return a, err
	}
	bin := filepath.Join(runner, "ghonce-action", "bin")
	base := append(os.Environ(),
		"GHONCE_SRC="+src, "RUNNER_TEMP="+runner, "GITHUB_OUTPUT="+filepath.Join(runner, "output"), "BIN="+bin,
		"GOTOOLCHAIN=local", "GOFLAGS=-modcacherw",
		"PATH="+filepath.Dir(goBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	// build runs the two steps once, from no binary, and returns their time.
	build := func(env []string) (time.Duration, error) {
		if err := os.RemoveAll(bin); err != nil {
			return 0, err
		}
		start := time.Now()
		for _, id := range []string{"where", "build"} {
			cmd := exec.CommandContext(ctx, "bash", "-c", scripts[id])
			cmd.Env = env
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				return 0, fmt.Errorf("the action's %q step: %v: %s", id, err, strings.TrimSpace(stderr.String()))
			}
		}
		return time.Since(start), nil
	}
	var env []string
	if cold {
		modcache, err := goenv("GOMODCACHE")
		if err != nil {
			return a, err
		}
		gocache, gomod := filepath.Join(runner, "ghonce-action", "go-build"), filepath.Join(runner, "ghonce-action", "go-mod")
		env = append(base, "GOCACHE="+gocache, "GOMODCACHE="+gomod,
			"GOPROXY=file://"+filepath.ToSlash(filepath.Join(modcache, "cache", "download")), "GOSUMDB=off")
		fmt.Fprintln(e.log, "cold build: empty GOCACHE and GOMODCACHE (minutes)")
		if a.cold, err = build(env); err != nil {
			return a, err
		}
		a.coldNote = "empty Go build and module caches; the modules downloaded from this machine's module cache served as a `file://` GOPROXY (no network: a runner's download from proxy.golang.org comes on top), checked against `go.sum`"
		a.warmNote = "the caches the cold build left, as `Restore the Go caches` restores them"
		fmt.Fprintf(e.log, "cold build: %s\n", a.cold.Round(time.Millisecond))
	} else {
		gocache, err := goenv("GOCACHE")
		if err != nil {
			return a, err
		}
		modcache, err := goenv("GOMODCACHE")
		if err != nil {
			return a, err
		}
		env = append(base, "GOCACHE="+gocache, "GOMODCACHE="+modcache, "GOPROXY=off")
		// A first build fills this machine's caches with what the action's
		// -trimpath build compiles, if they lack it: it is neither cold nor
		// warm, and the report says what it took.
		if a.prime, err = build(env); err != nil {
			return a, err
		}
		fmt.Fprintf(e.log, "first build on this machine's caches: %s\n", a.prime.Round(time.Millisecond))
		a.coldNote = fmt.Sprintf("not measured in this run (benchreport -action-cold=false); a first build on this machine's own caches took %s", secs(a.prime))
		a.warmNote = "this machine's own Go caches, after that build, standing in for the restored ones"
	}
	arch := filepath.Join(src, "internal", "cli", "archival.txt")
	b, err := os.ReadFile(arch)
	if err != nil {
		return a, err
	}
	// In turn, actionBuildRounds times: a build of the commit the caches
	// were left by, then one of another commit (archival.txt names it).
	for i := range actionBuildRounds {
		d, err := build(env)
		if err != nil {
			return a, err
		}
		a.warm = append(a.warm, d)
		fmt.Fprintf(e.log, "warm build: %s\n", d.Round(time.Millisecond))
		if fi, err := os.Stat(filepath.Join(bin, "ghonce")); err == nil {
			a.binBytes = fi.Size()
		}
		other := regexp.MustCompile(`(?m)^commit: .*$`).ReplaceAll(b, fmt.Appendf(nil, "commit: %040d", i+1))
		if err := os.WriteFile(arch, other, 0o644); err != nil {
			return a, err
		}
		if d, err = build(env); err != nil {
			return a, err
		}
		a.upgrade = append(a.upgrade, d)
		fmt.Fprintf(e.log, "warm build after an upgrade: %s\n", d.Round(time.Millisecond))
	}
	return a, nil
}

// actionBuildRounds is how many warm builds, and builds after an upgrade,
// are timed; the report gives the median and the range.
const actionBuildRounds = 3

// actionScripts returns the run: scripts of action.yml's steps by id.
func actionScripts(path string, ids ...string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var a struct {
		Runs struct {
			Steps []struct {
				ID  string `yaml:"id"`
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	out := map[string]string{}
	for _, st := range a.Runs.Steps {
		out[st.ID] = st.Run
	}
	for _, id := range ids {
		if out[id] == "" {
			return nil, fmt.Errorf("%s has no step with id %s and a script", path, id)
		}
	}
	return out, nil
}

// gitArchive extracts the tree under root, uncommitted changes to tracked
// files too, as `git archive` makes it (export-subst filled in) into dst.
func gitArchive(ctx context.Context, root, dst string) error {
	git := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...).Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w (the action's build is measured on a git checkout)", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	commit, err := git("stash", "create")
	if err != nil {
		return err
	}
	if commit == "" {
		if commit, err = git("rev-parse", "HEAD"); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	archive := exec.CommandContext(ctx, "git", "-C", root, "archive", "--format=tar", commit)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dst)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	if err := archive.Start(); err != nil {
		return err
	}
	if err := untar.Run(); err != nil {
		_ = archive.Wait()
		return fmt.Errorf("untar the archive: %w", err)
	}
	if err := archive.Wait(); err != nil {
		return fmt.Errorf("git archive: %w", err)
	}
	return nil
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// secsRange is the median of ds and their range.
func secsRange(ds []time.Duration) string {
	if len(ds) == 0 {
		return "not measured"
	}
	return fmt.Sprintf("%s (%s – %s)", secs(medianDuration(ds)), secs(slices.Min(ds)), secs(slices.Max(ds)))
}

func medianDuration(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(median(xs))
}
