# Export job. ADVISORY_LOCK_EXPORT = 8_000_005 in a comment is not a definition.
module Export
  ADVISORY_LOCK_EXPORT = 0x7A_0005 # site(7995397)
  BLOCK_KEY_SIZE = 8_000_005

  def self.run(conn)
    conn.execute("SELECT pg_try_advisory_lock(#{ADVISORY_LOCK_EXPORT})") # site(7995397)
    conn.execute(<<~SQL)
      -- was: SELECT pg_advisory_lock(1001003), an SQL comment inside the heredoc
      SELECT pg_advisory_unlock(7995397) -- site(7995397)
    SQL
    conn.execute(<<~SQL)
      SELECT pg_advisory_lock(1_001_001) -- lockward: allow(undeclared-site) site(1001001)
    SQL
    Worker.new(advisory_lock_id: 1_001_001) # expect(undeclared-site) site(1001001)
    Worker.new(:advisory_lock_id => 7995397) # site(7995397)
    conn.execute(%Q{SELECT pg_advisory_unlock(#{ADVISORY_LOCK_EXPORT})}) # site(7995397)
  end
end
