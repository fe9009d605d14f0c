use std::time::Duration;

use lockward_pg::testing::{Cluster, TestDb};
use rcgen::{CertificateParams, KeyPair};

use crate::support::{Log, rollup, start, wait_for};

/// A cluster serving a self-signed certificate for `localhost`, and the certificate's PEM file.
async fn tls_cluster() -> (Cluster, tempfile::NamedTempFile) {
    let key = KeyPair::generate().unwrap();
    let params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    let cert = params.self_signed(&key).unwrap();
    let cluster = Cluster::start_tls(&cert.pem(), &key.serialize_pem()).await;
    let root = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(root.path(), cert.pem()).unwrap();
    (cluster, root)
}

async fn uses_tls(url: &str) -> Result<bool, lockward_pg::Error> {
    let client = lockward_pg::connect(url, "tls-test").await?;
    let row = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await?;
    Ok(row.get(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sslmode_require_and_verify_full_connect_over_tls_and_a_wrong_host_name_is_refused() {
    let (cluster, root) = tls_cluster().await;
    let db = TestDb::on(&cluster).await;
    let port = cluster.addr().port();
    let name = db.name().to_owned();
    let root = root.path().display().to_string();

    let require = format!("postgres://postgres@127.0.0.1:{port}/{name}?sslmode=require");
    assert!(
        uses_tls(&require).await.unwrap(),
        "sslmode=require encrypts"
    );

    let full = format!(
        "postgres://postgres@localhost:{port}/{name}?sslmode=verify-full&sslrootcert={root}"
    );
    assert!(
        uses_tls(&full).await.unwrap(),
        "verify-full accepts the certificate for localhost"
    );

    let wrong_host = format!(
        "postgres://postgres@127.0.0.1:{port}/{name}?sslmode=verify-full&sslrootcert={root}"
    );
    assert!(
        uses_tls(&wrong_host).await.is_err(),
        "verify-full refuses a certificate for another name"
    );

    let chain_only =
        format!("postgres://postgres@127.0.0.1:{port}/{name}?sslmode=verify-ca&sslrootcert={root}");
    assert!(
        uses_tls(&chain_only).await.unwrap(),
        "verify-ca checks the chain only"
    );

    let log = Log::default();
    let worker = start(
        rollup(&full, Duration::from_millis(200)),
        &log,
        0,
        Duration::from_millis(10),
    );
    wait_for(
        "a cycle led over verify-full",
        Duration::from_secs(10),
        || !log.led().is_empty(),
    )
    .await;
    worker.shut_down().await;
}
