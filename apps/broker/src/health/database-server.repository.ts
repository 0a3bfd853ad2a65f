import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** One statement on a pooled connection: is the server that answered one that takes writes? */
const WRITABLE_SQL = `SELECT pg_is_in_recovery() AS in_recovery, current_setting('transaction_read_only') = 'on' AS read_only`;

interface DatabaseServerState {
  /** A standby (in recovery): during a failover, HAProxy may reach the promoted node before its promotion ends. */
  inRecovery: boolean;
  readOnly: boolean;
}

/** What readiness asks of the database server a pooled connection reaches. */
@Injectable()
export class DatabaseServerRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async state(): Promise<DatabaseServerState> {
    const [row] = await this.dataSource.query<Array<{ in_recovery: boolean; read_only: boolean }>>(WRITABLE_SQL);
    return { inRecovery: row.in_recovery, readOnly: row.read_only };
  }
}
