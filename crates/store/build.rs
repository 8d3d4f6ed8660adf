// sqlx::migrate! embeds the migration files; adding a file must rebuild the crate.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
