import SQLite from 'better-sqlite3';
const db = new SQLite('/tmp/keep/b.db', { readonly: true });
try { console.table(db.prepare("select name, count(*) pages, sum(pgsize)/1048576.0 mb, sum(payload)/1048576.0 payload_mb from dbstat group by name order by 3 desc limit 20").all()); } catch (e) { console.log(e.message); }
console.log(db.prepare("select avg(length(id)), avg(length(search_text)), avg(length(extra)), avg(length(email)), avg(length(created_at)) from leak_records").get());
console.log(db.prepare("select * from leak_records limit 2").all());
