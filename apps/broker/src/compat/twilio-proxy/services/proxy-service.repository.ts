/** The SQL of Twilio Proxy Services: one account's, by id or unique name, newest first. */
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PageCursor } from '../../../common/pagination/page-cursor';
import { violatedIndex } from '../unique-violation';
import { ProxyService } from './proxy-service.entity';

export type ServiceFields = Omit<ProxyService, 'id' | 'account' | 'accountId' | 'createdAt' | 'updatedAt'>;

@Injectable()
export class ProxyServiceRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** `name-taken`: the account has a Service of that unique name (80602). */
  async create(accountId: string, fields: ServiceFields, at: Date): Promise<ProxyService | 'name-taken'> {
    try {
      return await this.dataSource.getRepository(ProxyService).save({ ...fields, accountId, createdAt: at, updatedAt: at });
    } catch (error) {
      if (violatedIndex(error) === 'uq_twilio_proxy_services_name') return 'name-taken';
      throw error;
    }
  }

  /** The account's Service by id, or else by unique name (Twilio takes either in the path). */
  find(accountId: string, id: string | null, uniqueName: string | null): Promise<ProxyService | null> {
    const where = id !== null ? { accountId, id } : uniqueName !== null ? { accountId, uniqueName } : null;
    return where ? this.dataSource.getRepository(ProxyService).findOne({ where }) : Promise.resolve(null);
  }

  page(accountId: string, limit: number, after?: PageCursor): Promise<ProxyService[]> {
    const qb = this.dataSource
      .getRepository(ProxyService)
      .createQueryBuilder('s')
      .where('s.accountId = :accountId', { accountId })
      .orderBy('s.createdAt', 'DESC')
      .addOrderBy('s.id', 'DESC')
      .limit(limit);
    if (after) qb.andWhere('(s.createdAt, s.id) < (:at, :id)', { at: after.at, id: after.id });
    return qb.getMany();
  }

  /** `name-taken` as for create. */
  async update(service: ProxyService, changes: Partial<ServiceFields>, at: Date): Promise<ProxyService | 'name-taken'> {
    try {
      return await this.dataSource.getRepository(ProxyService).save({ ...service, ...changes, updatedAt: at });
    } catch (error) {
      if (violatedIndex(error) === 'uq_twilio_proxy_services_name') return 'name-taken';
      throw error;
    }
  }

  /** Removes the Service with its phone-number links, Sessions and Participants (their broker sessions stay). */
  async delete(id: string): Promise<void> {
    await this.dataSource.getRepository(ProxyService).delete({ id });
  }
}
