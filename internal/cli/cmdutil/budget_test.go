package cmdutil

import "testing"

// GHONCE_WRITES_PER_HOUR adds an hourly pace to the default one a minute.
func TestWritesPerHourFromTheEnvironment(t *testing.T) {
	t.Parallel()
	b, err := budgetFromEnv(func(k string) string { return map[string]string{"GHONCE_WRITES_PER_HOUR": "50"}[k] })
	if err != nil || b.Creates[0].N != 80 || b.Creates[1].N != 50 {
		t.Errorf("budget %+v, %v; want 80 a minute and 50 an hour", b, err)
	}
}
