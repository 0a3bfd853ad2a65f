import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A customer of the broker. Sessions, keys and callback settings belong to one account. */
@Entity('accounts')
export class Account {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  name: string;

  /** Where session events go when a session has no callbackUrl of its own. */
  @Column({ name: 'default_callback_url', type: 'text', nullable: true })
  defaultCallbackUrl: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
