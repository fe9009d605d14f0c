// The lockward dashboard.
