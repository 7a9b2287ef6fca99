package github

// A holder's process identity in a claim: sealed, so that only a runner on
// the same machine (the same boot) and in the same PID namespace can read
// it back, and so prove the holder gone (ledger.Proc, procid.Check); a
// reader anywhere else learns nothing of the host or the process.

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strconv"

	"github.com/ghonce/ghonce/ledger"
)

// elsewhere is the process identity of a sealed one this process cannot
// open (another machine or PID namespace): it names a process, and no
// check from here proves it gone (it is not ledger.Proc.Complete).
var elsewhere = ledger.Proc{Boot: "elsewhere"}

// machineAEAD is the cipher of the machine whose boot id is boot, in PID
// namespace ns. The boot id is a random 128-bit number a machine draws at
// boot and does not publish: another machine cannot derive the key.
func machineAEAD(boot string, ns uint64) cipher.AEAD {
	k := sha256.Sum256([]byte("ghonce.holder\x00" + boot + "\x00" + strconv.FormatUint(ns, 10)))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		panic(err) // a 32-byte key
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return aead
}

// sealProc is p's PID and start time sealed under the key of p's machine
// and PID namespace; "" for an identity that is not complete (it proves
// nothing anyway).
func sealProc(p ledger.Proc) string {
	if !p.Complete() {
		return ""
	}
	aead := machineAEAD(p.Boot, p.PIDNS)
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return ""
	}
	var msg [16]byte
	binary.BigEndian.PutUint64(msg[:8], uint64(p.PID))
	binary.BigEndian.PutUint64(msg[8:], p.Start)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, msg[:], nil))
}

// openProc reads back a sealed identity, as the process me: the identity,
// on me's machine and namespace, when it was sealed there; zero otherwise
// (another machine, another namespace, or not a sealed identity).
func openProc(sealed string, me ledger.Proc) ledger.Proc {
	if sealed == "" || me.Boot == "" || me.PIDNS == 0 {
		return ledger.Proc{}
	}
	b, err := base64.RawURLEncoding.DecodeString(sealed)
	aead := machineAEAD(me.Boot, me.PIDNS)
	if err != nil || len(b) < aead.NonceSize() {
		return ledger.Proc{}
	}
	msg, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], nil)
	if err != nil || len(msg) != 16 {
		return ledger.Proc{}
	}
	pid := binary.BigEndian.Uint64(msg[:8])
	if pid == 0 || pid > 1<<31 {
		return ledger.Proc{}
	}
	return ledger.Proc{Boot: me.Boot, PIDNS: me.PIDNS, PID: int(pid), Start: binary.BigEndian.Uint64(msg[8:])}
}
