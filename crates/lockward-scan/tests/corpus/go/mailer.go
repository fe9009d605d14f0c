package mailer

// AdvisoryLockMailer is the mailer's lock. pg_advisory_lock(2000003) here is a comment.
const (
	AdvisoryLockMailer int64 = 2_000_003 // site(2000003)
	BlockKeySize             = 2_000_003
	retryLimit               = 5
)

var query = `SELECT pg_try_advisory_lock(2000003)` // site(2000003)

func Send(db *sql.DB, shard int) error {
	_, err := db.Exec("SELECT pg_advisory_lock($1)", AdvisoryLockMailer) // site(2000003)
	_, err = db.Exec(fmt.Sprintf("SELECT pg_advisory_unlock(%d)", AdvisoryLockMailer)) // site(2000003)
	_ = '\''
	_, err = db.Exec("SELECT pg_advisory_xact_lock(-1)") // expect(unregistered-id) site(-1)
	_, err = db.Exec("SELECT pg_advisory_lock($1, $2)", AdvisoryLockMailer, shard) // expect(key-shape-mismatch) site(2000003)
	_ = Job{AdvisoryLockID: 2_000_003, Name: "mailer"} // site(2000003)
	return err
}

const AdvisoryLockMailerShard = int64(2_000_097) // expect(unregistered-id) site(2000097)
const AdvisoryLockMailerRetry = int64(2_000_096) + 1 // expect(duplicate-definition) expect(unregistered-id) site(2000097)
