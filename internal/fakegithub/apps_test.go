package fakegithub

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ghonce/ghonce/tests/fgtest"
)

// The fake checks an App's JWT as GitHub does; each of these is refused
// with 401, and only the well-formed one reads /app.
func TestAppJWTChecks(t *testing.T) {
	clk := fgtest.NewClock()
	s := NewServer(Options{Now: clk.Now})
	t.Cleanup(s.Close)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s.AddApp(App{ID: 7, Slug: "robot", PublicKey: &key.PublicKey})
	now := clk.Now()
	claims := func(iss any, iat, exp time.Duration) jwt.MapClaims {
		return jwt.MapClaims{"iss": iss, "iat": now.Add(iat).Unix(), "exp": now.Add(exp).Unix()}
	}
	rs := func(k *rsa.PrivateKey, c jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, c).SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// The classic confusion: HS256 with the public key as the secret.
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	hs, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(7, -time.Minute, 5*time.Minute)).SignedString(pub)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, jwt string
		want      int
		msg       string
	}{
		{"well-formed", rs(key, claims(7, -time.Minute, 9*time.Minute)), 200, ""},
		{"iss as a string", rs(key, claims("7", -time.Minute, 9*time.Minute)), 200, ""},
		{"another key", rs(other, claims(7, -time.Minute, 9*time.Minute)), 401, "could not be decoded"},
		{"unknown app", rs(key, claims(8, -time.Minute, 9*time.Minute)), 401, "Integration not found"},
		{"expired", rs(key, claims(7, -20*time.Minute, -10*time.Minute)), 401, "'exp'"},
		{"issued in the future", rs(key, claims(7, 5*time.Minute, 9*time.Minute)), 401, "'iat'"},
		{"longer than 10 minutes", rs(key, claims(7, -time.Minute, 11*time.Minute)), 401, "too far in the future"},
		{"HS256 with the public key", hs, 401, "could not be decoded"},
		{"not a JWT", "ghs_installationtoken", 401, "could not be decoded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, s.URL()+"app", nil)
			req.Header.Set("Authorization", "Bearer "+c.jwt)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Message string `json:"message"`
				Slug    string `json:"slug"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != c.want || !strings.Contains(body.Message, c.msg) || (c.want == 200 && body.Slug != "robot") {
				t.Fatalf("GET /app: %d %+v, want %d %q", resp.StatusCode, body, c.want, c.msg)
			}
		})
	}
}
