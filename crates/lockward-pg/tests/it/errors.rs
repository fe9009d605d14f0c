use lockward_pg::testing::TestDb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_login_says_what_the_server_said() {
    let db = TestDb::new().await;
    let url = format!(
        "postgres://lockward_no_such_role@{}/{}",
        db.server_addr(),
        db.name()
    );
    let error = lockward_pg::connect(&url, "lockward-test")
        .await
        .expect_err("the role does not exist");
    assert!(
        matches!(&error, lockward_pg::Error::Postgres(inner) if inner.as_db_error().is_some()),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains(r#"role "lockward_no_such_role" does not exist"#)
            && message.contains("SQLSTATE 28000"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_says_why() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let error = lockward_pg::connect(&format!("postgres://postgres@{addr}/postgres"), "x")
        .await
        .expect_err("nothing listens there");
    let message = error.to_string();
    assert!(message.contains("Connection refused"), "{message}");
}
