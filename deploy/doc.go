// Package deploy holds no code: what an operator loads beside ghonce (the
// Prometheus alerting rules in prometheus/, their unit tests, the Grafana
// dashboard in grafana/), and the tests that hold them to the metrics
// ghonce exports and to the service guide.
package deploy
